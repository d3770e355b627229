"""Serializers only describe shapes: what the API reads and returns, typed for OpenAPI."""
