"""Django forms of the dashboard: they parse and validate query strings, nothing more."""
