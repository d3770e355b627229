from django.apps import AppConfig


class TopologyConfig(AppConfig):
    name = "topology"
    verbose_name = "Cluster topology mirror"

    def ready(self) -> None:
        from topology import checks  # noqa: F401  (registers the system checks)
        from topology.services.whatif import after_response

        after_response.connect()
