"""Kubernetes object names, checked as the API server checks them (k8s.io/apimachinery
validation): a DNS-1123 label (namespaces) and a DNS-1123 subdomain (most names, label
key prefixes, schedulerNames). Use `fullmatch`."""

from __future__ import annotations

import re

DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?")
