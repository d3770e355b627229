"""Diagnosis of the cluster as it is (issue 30): why pods are Pending or rejected, and
whether the published topology data tells the truth.

`facts` is what every check reads, built either from the mirror (`mirror`) or from a
kubectl dump (`offline`); `pods` diagnoses Pending and rejected pods with the engine;
`findings` runs the data-truth checks. Both give the JSON of `manage.py diagnose`.
"""
