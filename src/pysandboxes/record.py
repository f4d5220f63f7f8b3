"""The one record base of the package (issue 24 item 5): :class:`Record`.

Every record class derives from it, in one of two storages:

- **slots** (the rule records of ``policy.model``, ``errors.Denial``, ``runtime.RunContext``,
  the providers' ``Launch``, Landlock's plan): a subclass declares ``__slots__``, ``_fields``
  and a typed ``__init__`` that sets them with ``object.__setattr__``; cheap to define (no
  ``dataclasses``, which imports ``inspect``) and to build;
- **a tuple** (the guard's holders and tables): a class deriving from :class:`NamedTuple`
  declares annotated fields and gets a ``tuple`` subclass with read-only properties, built
  without ``exec`` (``collections.namedtuple`` compiles its ``__new__``), whose fields not even
  ``object.__setattr__`` can rebind -- what the guard needs of what its hook holds. Under a
  type checker ``NamedTuple`` is the real ``typing.NamedTuple`` (importing ``typing`` costs
  about 6 ms of every sandboxed start-up).

Both have the same equality by class and values, ``_fields``, :meth:`Record.replace`,
:meth:`Record.to_dict` and pickling. Below every layer (docs/architecture.md, Layers):
``policy`` and ``guard`` both use it.
"""

from __future__ import annotations

from _operator import itemgetter  # (the C module: ``operator`` is one more file to load)

TYPE_CHECKING = False  # typing costs milliseconds of every start-up (pysandboxes/record.py)
if TYPE_CHECKING:
    from typing import Any, TypeVar

    _R = TypeVar("_R", bound="Record")


class Record:
    """Base of the small immutable rule records: value equality, hash, repr, pickling.

    Written by hand rather than with ``@dataclass``: generating a dataclass costs about a
    millisecond per class at import (and importing ``dataclasses`` pulls ``inspect``), and
    these modules are on the start-up path of every run. A slotted subclass declares
    ``__slots__`` and ``_fields`` (the field names in constructor order: a formatter may sort
    ``__slots__``) and a typed ``__init__`` that sets them with ``object.__setattr__`` (or
    :meth:`_init`); a :class:`NamedTuple` subclass declares annotations (see the module
    docstring).
    """

    __slots__: tuple[str, ...] = ()
    #: The fields in constructor order (``__slots__`` order is not relied on).
    _fields: tuple[str, ...] = ()

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: {type(self).__name__} is frozen")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}: {type(self).__name__} is frozen")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def __ne__(self, other: object) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self) -> int:
        return hash((self.__class__.__name__, *self._values()))

    def __repr__(self) -> str:
        args = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._fields)
        return f"{type(self).__name__}({args})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), self._values())

    def __copy__(self) -> Record:
        return self

    def __deepcopy__(self, memo: Any) -> Record:
        return self

    def replace(self: _R, **changes: Any) -> _R:
        """A copy with some fields changed (as ``dataclasses.replace``)."""

        values = {name: getattr(self, name) for name in self._fields}
        values.update(changes)
        return type(self)(**values)

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self._fields}

    def _init(self, **values: Any) -> None:
        """Set every field from ``values`` (a slotted subclass's ``__init__`` by keyword)."""

        for name in self._fields:
            object.__setattr__(self, name, values[name])


class _RecordType(type):
    def __new__(mcls, name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> Any:
        if namespace.get("_base_of_records"):
            return super().__new__(mcls, name, bases, namespace)
        fields = tuple(namespace.get("__annotations__", {}))
        defaults = {f: namespace[f] for f in fields if f in namespace}

        def __new__(cls: type, *args: Any, **kwargs: Any) -> Any:
            if len(args) > len(fields):
                raise TypeError(f"{name}() takes {len(fields)} arguments")
            values = list(args)
            for field in fields[len(args) :]:
                if field in kwargs:
                    values.append(kwargs.pop(field))
                elif field in defaults:
                    values.append(defaults[field])
                else:
                    raise TypeError(f"{name}() missing argument {field!r}")
            if kwargs:
                raise TypeError(f"{name}() got unexpected arguments {sorted(kwargs)}")
            return tuple.__new__(cls, values)

        body: dict[str, Any] = {
            "__slots__": (),
            "__new__": __new__,
            "_fields": fields,
            "__module__": namespace.get("__module__"),
            "__qualname__": namespace.get("__qualname__", name),
            "__doc__": namespace.get("__doc__"),
            "__repr__": lambda self: f"{name}({', '.join(map(repr, self))})",
        }
        for index, field in enumerate(fields):
            body[field] = property(itemgetter(index))
        for key, value in namespace.items():  # methods and properties defined in the class
            is_member = callable(value) or isinstance(value, property)
            if is_member and key not in body and not key.startswith("__"):
                body[key] = value
        return type.__new__(type, name, (tuple, Record), body)


class NamedTuple(metaclass=_RecordType):
    """Base of the guard's records (see the module docstring)."""

    _base_of_records = True
