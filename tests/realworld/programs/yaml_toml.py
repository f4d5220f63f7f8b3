"""Configuration: read a YAML and a TOML file, merge them, write the result as JSON."""

import json
import tomllib
from pathlib import Path

import yaml

settings = yaml.safe_load(Path("config.yaml").read_text())
with open("pyproject.toml", "rb") as handle:
    project = tomllib.load(handle)
settings["project"] = project["project"]["name"]
out = Path("build")
out.mkdir(exist_ok=True)
(out / "settings.json").write_text(json.dumps(settings, sort_keys=True))
print(yaml.safe_dump(settings, sort_keys=True).strip())
