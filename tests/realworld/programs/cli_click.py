"""A command-line tool built with click: options, an environment default, a file argument."""

import click


@click.command()
@click.option("--count", default=1, help="How many greetings.")
@click.option("--name", envvar="GREET_NAME", required=True, help="Who to greet.")
@click.argument("output", type=click.File("w"))
def greet(count: int, name: str, output) -> None:
    for _ in range(count):
        output.write(f"Hello, {name}!\n")
    click.echo(f"wrote {count} greeting(s)")


if __name__ == "__main__":
    greet()
