"""deploy/kubernetes holds what the README promises, and no secret value."""

from __future__ import annotations

import re

from tests.sync import rbac


def kinds() -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for doc in rbac.manifests():
        found.setdefault(doc["kind"], []).append(doc)
    return found


def deployments() -> dict[str, dict]:
    return {d["metadata"]["name"]: d for d in kinds()["Deployment"]}


def test_the_manifests_declare_namespace_account_rbac_service_and_four_deployments():
    found = kinds()
    assert [n["metadata"]["name"] for n in found["Namespace"]] == ["topolens"]
    assert [s["metadata"]["name"] for s in found["ServiceAccount"]] == ["topolens"]
    assert {"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "Service"} <= set(found)
    assert set(deployments()) == {
        "topolens-web",
        "topolens-worker",
        "topolens-watch",
        "topolens-beat",
    }


def test_no_secret_value_is_committed_and_every_pod_reads_the_secret_by_reference():
    assert "Secret" not in kinds()
    for name, deployment in deployments().items():
        spec = deployment["spec"]["template"]["spec"]
        for container in spec.get("initContainers", []) + spec["containers"]:
            refs = [e.get("secretRef", {}).get("name") for e in container.get("envFrom", [])]
            assert "topolens-secrets" in refs, (name, container["name"])
            assert not container.get("env"), "settings come from the ConfigMap and the Secret"
    for config in kinds()["ConfigMap"]:
        secret_keys = {"DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL", "SECRET_KEY"} & set(
            config["data"]
        )
        assert not secret_keys, f"{secret_keys} belong in the Secret"
        assert not any(re.search(r"://[^/\s]*:[^@/\s]+@", v) for v in config["data"].values())


def test_each_queue_has_its_worker_and_beat_runs_alone():
    commands = {
        name: " ".join(d["spec"]["template"]["spec"]["containers"][0]["command"])
        for name, d in deployments().items()
    }
    assert "-Q celery" in commands["topolens-worker"]
    assert "-Q watch" in commands["topolens-watch"]
    assert " beat" in commands["topolens-beat"]
    assert deployments()["topolens-beat"]["spec"]["replicas"] == 1


def test_only_the_sync_workers_mount_the_service_account_token():
    for name, deployment in deployments().items():
        spec = deployment["spec"]["template"]["spec"]
        assert spec["serviceAccountName"] == "topolens"
        mounts_token = spec.get("automountServiceAccountToken", True)
        assert mounts_token == (name in ("topolens-worker", "topolens-watch")), name
