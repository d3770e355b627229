"""Plotly figure builders: pure functions from selector or service data to figures.

No database access and no request: each builder takes plain dataclasses and returns a
`plotly.graph_objects.Figure`, so it is tested on its own. Colours come from
`topology.choices`; every colour shown is paired with text (a mark, a number or the
hover), so colour is never the only signal.
"""
