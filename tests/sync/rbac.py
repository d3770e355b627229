"""RBAC as the API server applies it, for the manifests in deploy/kubernetes.

A request (method, path, query) becomes a verb on a resource, then is allowed if a
rule of a role bound to Topolens' ServiceAccount grants it in that scope. Rules with
resourceNames allow list/watch only when the request names the object through a
`metadata.name` field selector, as Kubernetes does.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "kubernetes"
SERVICE_ACCOUNT = ("topolens", "topolens")  # (namespace, name)
# Granted to every authenticated identity by the built-in system:discovery ClusterRole.
DISCOVERY_DEPTH = {"api": 2, "apis": 3}


@dataclass(frozen=True)
class Attributes:
    verb: str
    group: str
    resource: str
    namespace: str
    name: str
    field_selector: str


@dataclass(frozen=True)
class Rule:
    groups: frozenset[str]
    resources: frozenset[str]
    verbs: frozenset[str]
    names: frozenset[str]
    namespace: str  # "" for a ClusterRole bound cluster-wide

    def allows(self, request: Attributes) -> bool:
        if self.namespace and request.namespace != self.namespace:
            return False
        if request.group not in self.groups or request.resource not in self.resources:
            return False
        if request.verb not in self.verbs:
            return False
        if not self.names:
            return True
        if request.verb in ("list", "watch"):
            return request.field_selector in {f"metadata.name={n}" for n in self.names}
        return request.name in self.names


def manifests() -> list[dict[str, Any]]:
    docs = []
    for path in sorted(DEPLOY.glob("*.yaml")):
        docs += [doc for doc in yaml.safe_load_all(path.read_text()) if doc]
    return docs


def bound_rules() -> list[Rule]:
    """Rules of every role bound to the ServiceAccount, each with its scope."""
    docs = manifests()
    roles = {
        (d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"]): d
        for d in docs
        if d["kind"] in ("Role", "ClusterRole")
    }
    rules = []
    for binding in (d for d in docs if d["kind"] in ("RoleBinding", "ClusterRoleBinding")):
        subjects = {
            (s.get("namespace", ""), s["name"])
            for s in binding["subjects"]
            if s["kind"] == "ServiceAccount"
        }
        if SERVICE_ACCOUNT not in subjects:
            continue
        scope = binding["metadata"].get("namespace", "") if binding["kind"] == "RoleBinding" else ""
        ref = binding["roleRef"]
        role = roles[(ref["kind"], scope if ref["kind"] == "Role" else "", ref["name"])]
        for rule in role["rules"]:
            rules.append(
                Rule(
                    frozenset(rule["apiGroups"]),
                    frozenset(rule["resources"]),
                    frozenset(rule["verbs"]),
                    frozenset(rule.get("resourceNames", [])),
                    scope,
                )
            )
    return rules


def attributes(method: str, path: str, query: dict[str, str]) -> Attributes | None:
    """None for discovery paths (non-resource URLs)."""
    parts = path.strip("/").split("/")
    if len(parts) <= DISCOVERY_DEPTH.get(parts[0], 0):
        return None
    group, rest = ("", parts[2:]) if parts[0] == "api" else (parts[1], parts[3:])
    namespace = ""
    if rest[0] == "namespaces" and len(rest) >= 3:
        namespace, rest = rest[1], rest[2:]
    name = rest[1] if len(rest) > 1 else ""
    watching = query.get("watch", "").lower() in ("1", "t", "true")
    verb = {
        "GET": ("watch" if watching else "list") if not name else "get",
        "PATCH": "patch",
        "PUT": "update",
        "POST": "create",
        "DELETE": "delete",
    }[method]
    return Attributes(verb, group, rest[0], namespace, name, query.get("fieldSelector", ""))


def allowed(method: str, path: str, query: dict[str, str], rules: list[Rule]) -> bool:
    request = attributes(method, path, query)
    return request is None or any(rule.allows(request) for rule in rules)


def assert_allowed(requests: Any) -> None:
    rules = bound_rules()
    refused = {
        (r.method, r.path, r.query.get("fieldSelector", ""))
        for r in requests
        if not allowed(r.method, r.path, r.query, rules)
    }
    assert not refused, f"deploy/kubernetes/rbac.yaml does not allow: {sorted(refused)}"
