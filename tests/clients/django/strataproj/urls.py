"""No views: the project only exercises the ORM, migrations and management commands."""

urlpatterns = []
