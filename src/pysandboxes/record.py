"""A light stand-in for ``typing.NamedTuple`` at run time (the guard's holders and tables).

Importing ``typing`` costs about 6 ms of every sandboxed start-up; the guard's modules only
need immutable records with named fields. Under a type checker they import the real
``typing.NamedTuple``; at run time this one: a ``tuple`` subclass with read-only properties,
built without ``exec`` (``collections.namedtuple`` compiles its ``__new__``).
"""

from __future__ import annotations

from operator import itemgetter

TYPE_CHECKING = False  # typing costs milliseconds of every start-up (pysandboxes/record.py)
if TYPE_CHECKING:
    from typing import Any


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
        return type.__new__(type, name, (tuple,), body)


class NamedTuple(metaclass=_RecordType):
    """Base of the guard's records (see the module docstring)."""

    _base_of_records = True
