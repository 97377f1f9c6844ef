"""The stable diagnostic codes: one row per code, data only.

Codes never change meaning once released. The scheme:

- TMS1xx  API mapping status of a torch API use
- TMS2xx  dynamic-shape risks (network code); TMS25x the same in data processing
- TMS3xx  migration-readiness checks beyond the API table
- TMS9xx  the file could not be analysed
"""

from __future__ import annotations

from dataclasses import dataclass

from .model import Category, Severity

MAPPING_TABLE_URL = "https://www.mindspore.cn/docs/en/master/note/api_mapping/pytorch_api_mapping.html"
DYNAMIC_SHAPE_URL = "https://www.mindspore.cn/docs/en/r2.5.0/migration_guide/dynamic_shape.html"
MIGRATION_GUIDE_URL = "https://www.mindspore.cn/docs/en/master/migration_guide/overview.html"


@dataclass(frozen=True, slots=True)
class CodeInfo:
    code: str
    name: str
    severity: Severity
    category: Category
    summary: str
    doc_url: str


_ROWS = (
    ("TMS101", "equivalent-api", Severity.INFO, Category.EQUIVALENT,
     "The torch API has an equivalent MindSpore API.", MAPPING_TABLE_URL),
    ("TMS102", "different-parameters", Severity.WARNING, Category.DIFF_PARAMS,
     "The MindSpore API differs in parameters (renamed, dropped, other defaults or values).", MAPPING_TABLE_URL),
    ("TMS103", "missing-api", Severity.ERROR, Category.MISSING,
     "MindSpore has no equivalent for this torch API at the target version.", MAPPING_TABLE_URL),
    ("TMS104", "unmapped-api", Severity.WARNING, Category.UNMAPPED,
     "The torch API is not in the mapping tables.", MAPPING_TABLE_URL),
    ("TMS105", "possible-tensor-method", Severity.INFO, Category.UNMAPPED,
     "A method call whose receiver may be a tensor but is not proven one (low confidence).", MAPPING_TABLE_URL),
    ("TMS201", "dynamic-shape-op", Severity.WARNING, Category.DYNAMIC_SHAPE,
     "The op's output shape depends on tensor values.", DYNAMIC_SHAPE_URL),
    ("TMS202", "dynamic-shape-argument", Severity.WARNING, Category.DYNAMIC_SHAPE,
     "The op makes a dynamic shape because an argument is not a constant.", DYNAMIC_SHAPE_URL),
    ("TMS901", "syntax-error", Severity.ERROR, Category.FILE_ERROR,
     "The file is not valid Python 3 and could not be analysed.", MIGRATION_GUIDE_URL),
    ("TMS902", "decode-error", Severity.ERROR, Category.FILE_ERROR,
     "The file could not be decoded (invalid encoding or coding declaration).", MIGRATION_GUIDE_URL),
    ("TMS903", "read-error", Severity.ERROR, Category.FILE_ERROR,
     "The file could not be read (missing, unreadable, binary, symlink loop).", MIGRATION_GUIDE_URL),
    ("TMS904", "analysis-error", Severity.ERROR, Category.FILE_ERROR,
     "The analysis failed on this file (an internal error; please report it).", MIGRATION_GUIDE_URL),
)

CODES: dict[str, CodeInfo] = {row[0]: CodeInfo(*row) for row in _ROWS}


def info(code: str) -> CodeInfo:
    return CODES[code]
