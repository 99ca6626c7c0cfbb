from django.db import models


class Counter(models.Model):
    """Test statistics (e.g. token requests by grant_type). Kept in the DB so every
    waitress thread sees the same numbers."""

    key = models.CharField(max_length=200, unique=True)
    count = models.BigIntegerField(default=0)

    class Meta:
        db_table = "sfauth_counter"
