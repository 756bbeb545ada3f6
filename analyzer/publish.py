"""Every JSON Schema this project publishes under ``schemas/``: ``python -m analyzer.publish [DIR]`` rewrites them.

The log schemas come from :mod:`analyzer.schema`, the audit's from :mod:`analyzer.audit.schema`;
this module sits above both, so the log layer never imports the audit.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from analyzer.audit.schema import audit_schema
from analyzer.schema import LOG_VERSION, dumps, log_schema, variant_schema
from analyzer.variants import registry


def generated_files() -> dict[str, dict[str, Any]]:
    """File name under ``schemas/`` -> schema, for every schema this project publishes."""
    files = {f"log-v{LOG_VERSION}.schema.json": log_schema()}
    for name in registry():
        files[f"log-v{LOG_VERSION}-{name}.schema.json"] = variant_schema(name)
    files["audit-v1.schema.json"] = audit_schema()
    return files


def main(argv: list[str] | None = None) -> int:
    out = Path(argv[0] if argv else "schemas")
    out.mkdir(exist_ok=True)
    for name, schema in generated_files().items():
        (out / name).write_text(dumps(schema), encoding="utf-8")
        print(out / name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
