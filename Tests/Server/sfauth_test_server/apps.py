from django.apps import AppConfig


class SfauthTestServerConfig(AppConfig):
    name = "sfauth_test_server"
    default_auto_field = "django.db.models.BigAutoField"
