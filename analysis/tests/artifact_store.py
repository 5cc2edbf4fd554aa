"""Storage a LAVA job publishes to, on 127.0.0.1, in the two shapes lava/rtsoak-publish speaks:
a PUT of a file with `Authorization: Bearer TOKEN` (a WebDAV directory, Artifactory), and a
multipart POST of the fields `path` (the file) and `token`, answered with the stored file's URL,
as the LAVA lab's artifact store answers. A wrong or missing token is refused with 403, as such
storage refuses it. What it took is kept in memory by URL path."""

from __future__ import annotations

import email.parser
import email.policy
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class ArtifactStore:
    def __init__(self, token: str):
        self.token = token
        self.files: dict[str, bytes] = {}
        self.refused: list[str] = []
        store = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def body(self) -> bytes:
                return self.rfile.read(int(self.headers.get("Content-Length", 0)))

            def answer(self, status: int, text: str = "") -> None:
                data = text.encode()
                self.send_response(status)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_PUT(self):
                data = self.body()
                if self.headers.get("Authorization") != f"Bearer {store.token}":
                    store.refused.append(self.path)
                    return self.answer(403, "wrong token\n")
                store.files[self.path] = data
                self.answer(201)

            def do_POST(self):
                fields = store.form(self.headers.get("Content-Type", ""), self.body())
                if fields.get("token", (None, b""))[1].decode() != store.token or "path" not in fields:
                    store.refused.append(self.path)
                    return self.answer(403, "wrong token\n")
                name, data = fields["path"]
                path = self.path.rstrip("/") + "/" + name
                store.files[path] = data
                self.answer(200, f"{store.url}{path}\n")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    @staticmethod
    def form(content_type: str, body: bytes) -> dict[str, tuple[str | None, bytes]]:
        """A multipart/form-data body as {field: (file name, bytes)}."""
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            f"Content-Type: {content_type}\r\n\r\n".encode() + body
        )
        fields = {}
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            fields[name] = (part.get_filename(), part.get_payload(decode=True))
        return fields

    def __enter__(self) -> "ArtifactStore":
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
