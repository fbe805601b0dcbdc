"""The reader's repeated-pair check under its former module name (see :mod:`.input_checks`)."""

from .input_checks import first_of_pair

__all__ = ["first_of_pair"]
