from django.apps import AppConfig


class SchedulerApiConfig(AppConfig):
    name = "scheduler_api"
    verbose_name = "Scheduler API"
