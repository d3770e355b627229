"""The agreement audit (issue 32): does the engine agree with where pods really landed?"""
