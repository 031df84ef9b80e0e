"""The local Hermes store, read-only: where it is (`location`), the file checked before
SQLite opens it (`file_check`), the SQLite reader (`sqlite_reader`, the only sqlite3 user) and
the hints it proposes, each proven over HTTP before use (`hints`)."""
