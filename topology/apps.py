from django.apps import AppConfig


class TopologyConfig(AppConfig):
    name = "topology"
    verbose_name = "Cluster topology mirror"

    def ready(self) -> None:
        from topology.services import after_response

        after_response.connect()
