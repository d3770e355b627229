"""The REST API for platform teams, under /api/v1/ (NetBox-like: serializers, views, urls)."""
