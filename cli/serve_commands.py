"""`mnemolog serve`: the local web page (projects, context, items, review, consolidations, forget, time)."""

from __future__ import annotations

import typer
from mnemolog.cli.output import Exit, UserError, console


def serve(
    port: int = typer.Option(8377, "--port", help="The port (0: any free one; the URL printed names it)."),
    host: str = typer.Option("127.0.0.1", "--host", help="The address to bind. Anything but loopback needs --token."),
    token: str | None = typer.Option(
        None, "--token", envvar="MNEMOLOG_SERVE_TOKEN", help="Required to bind a non-loopback address: every request must carry it."
    ),
    open_browser: bool = typer.Option(False, "--open", help="Open the page in the default browser."),
) -> None:
    """Serve a local web page to see and steer memory (127.0.0.1 only, unless given a token)."""
    import socket
    import threading
    import webbrowser

    import uvicorn
    from mnemolog.cli.command_store import store
    from mnemolog.cli.web.app import create_app
    from mnemolog.cli.web.security import Access, BindRefused, check_bind, is_loopback

    try:
        check_bind(host, token)
    except BindRefused as error:
        raise UserError(str(error), Exit.USAGE) from error
    with store():
        pass  # fail now, with the CLI's one-line error, when the store cannot be opened
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        raise UserError(f"cannot listen on {host}:{port}: {error.strerror or error}") from error
    sock.listen(64)
    bound_port = sock.getsockname()[1]
    shown_host = f"[{host}]" if family == socket.AF_INET6 else host
    url = f"http://{shown_host}:{bound_port}/" + (f"?token={token}" if token else "")
    access = Access(loopback=is_loopback(host), token=token)
    console.print(f"mnemolog serve: {url}  (Ctrl-C stops it)", highlight=False, markup=False)
    if not access.loopback:
        console.print("  bound beyond loopback: every request needs the token in that URL", highlight=False, markup=False)
    server = uvicorn.Server(uvicorn.Config(create_app(access, store), log_level="warning", lifespan="off"))
    if open_browser:
        threading.Timer(0.5, webbrowser.open, args=(url,)).start()
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()


def register(app: typer.Typer) -> None:
    """Add these commands to the app."""
    app.command()(serve)
