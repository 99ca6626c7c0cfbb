"""sfauth end-to-end test authorization server (Django + django-oauth-toolkit)."""
