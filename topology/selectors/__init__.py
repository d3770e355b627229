"""Reads of the mirror used by views, the API and commands (HackSoft "selectors").

One module per page topic; the shapes they return live in `types` and carry no
model, so that the figure builders can be tested without a database.
"""
