"""Page sizes of the dashboard's messages route, shared by the client and the reading loops."""

from __future__ import annotations

PAGE_LIMIT = 50  # rows per newest page: the dashboard's own default
MAX_LIMIT = 500  # the largest page the dashboards accept
