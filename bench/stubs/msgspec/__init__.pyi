# The part of msgspec's API that bench/wire_msgspec_prototype.py and bench/bench_wire.py use.
# msgspec is measured, not depended on (`pip install msgspec` by hand), so the project's venv
# usually lacks it and its own stubs; these mirror them for the names used here.
from collections.abc import Callable
from typing import Any, ClassVar, Final, TypeVar, dataclass_transform

from . import json as json

_T = TypeVar("_T")

__version__: str

class UnsetType: ...

UNSET: Final[UnsetType]

def field(*, default: Any = ..., default_factory: Callable[[], Any] = ..., name: str | None = ...) -> Any: ...

@dataclass_transform(field_specifiers=(field,))
class Struct:
    __struct_fields__: ClassVar[tuple[str, ...]]
    def __init_subclass__(
        cls,
        *,
        frozen: bool = ...,
        kw_only: bool = ...,
        forbid_unknown_fields: bool = ...,
        rename: str | None = ...,
        **kwargs: Any,
    ) -> None: ...

def convert(obj: Any, type: type[_T], *, strict: bool = ...) -> _T: ...
