"""Services (writes) the API's views, admin and tasks call: small, keyword-only, atomic."""
