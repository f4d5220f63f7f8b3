"""Serve and fetch over HTTP on loopback, store in SQLite.

A server on 127.0.0.1 (port chosen by the kernel) answers /items from an SQLite database in
./db; the client fetches it by the name "localhost", stores what it got in a second table, and
prints a summary. Run from the project directory.
"""

import http.server
import json
import os
import sqlite3
import threading
import urllib.request

DB = os.path.join("db", "items.sqlite3")


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        with sqlite3.connect(DB) as con:
            rows = con.execute("SELECT name, qty FROM items ORDER BY name").fetchall()
        body = json.dumps(rows).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def main() -> None:
    os.makedirs("db", exist_ok=True)
    with sqlite3.connect(DB) as con:
        con.execute("CREATE TABLE IF NOT EXISTS items (name TEXT PRIMARY KEY, qty INTEGER)")
        con.execute("CREATE TABLE IF NOT EXISTS fetched (payload TEXT)")
        con.executemany("INSERT OR REPLACE INTO items VALUES (?, ?)", [("apple", 3), ("pear", 5)])
    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    port = server.server_address[1]
    with urllib.request.urlopen(f"http://localhost:{port}/items", timeout=10) as response:
        payload = response.read().decode()
    server.shutdown()
    server.server_close()
    with sqlite3.connect(DB) as con:
        con.execute("INSERT INTO fetched VALUES (?)", (payload,))
        count = con.execute("SELECT COUNT(*) FROM fetched").fetchone()[0]
    print(f"fetched {json.loads(payload)} ({count} stored)")


if __name__ == "__main__":
    main()
