"""Thin, declarative views: a queryset from a selector, a serializer, a filterset, permissions."""
