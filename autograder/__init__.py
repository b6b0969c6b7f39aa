"""Release, self-check and grade the Transformer-math notebooks (built on nbgrader)."""
import sys as _sys

__version__ = "0.1.0"

# nbformat imports jsonschema, which imports rfc3987_syntax when it is installed (it comes with
# jsonschema[format-nongpl], which jupyter-events asks for); rfc3987_syntax 1.1.0 builds some thirty Lark
# parsers as it is imported: 1.3 s of CPU in every process that reads a notebook (the grader, each warm
# interpreter, a notebook that imports an earlier one), for the "iri" format that no notebook schema
# uses (jsonschema issue #1428). A None entry makes that optional import fail as if the package were
# absent: jsonschema then just has no "iri" checker. Nothing else changes.
_sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]
