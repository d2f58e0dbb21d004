"""Text as a terminal shows it: escape codes and ``\\r`` applied (:mod:`.ansi`), and the D6 secret scrubber
that finds secrets in that rendered text and cuts them from the raw bytes (:mod:`.scrubbing`)."""

# internal (docs/api.md): the package exports no names itself; holon_nb imports from its modules
__all__: list[str] = []
