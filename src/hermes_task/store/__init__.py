"""The local Hermes store, read-only: where it is (`location`), and the SQLite reader
(`sqlite_reader`, the only sqlite3 user), which checks the file before SQLite opens it."""
