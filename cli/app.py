import typer
app = typer.Typer()
@app.command()
def doctor() -> None:
    print("ok")
def main() -> None:
    app()
