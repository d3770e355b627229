"""Reads for the API that topology's selectors do not offer, one module per topic.

Each returns a queryset or plain data with a fixed number of queries, whatever the
number of rows.
"""
