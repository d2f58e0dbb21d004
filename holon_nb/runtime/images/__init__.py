"""Images: ViewImage and GenerateImage (workspace spec §12, §13).

Owns: :mod:`.probe` (the file checks shared by both tools: size before reading, content sniffing,
dimensions and the pixel limit, read through Pillow's header parsers without decoding pixels),
:mod:`.observation` (the ``visual_reference``, reply parsing, the observation cache),
:mod:`.selection` (which model sees or draws: explicit defaults, auto-discovery among authenticated
providers), :mod:`.generated` (safe names, exclusive creation under ``<agent home>/media/generated/``)
and :mod:`.service` (``ImagePlane``, which handlers see as ``ctx.images``).

May use: ``runtime.core`` and ``runtime.models`` (the provider catalog), ``holon_nb.providers``
(the SDK calls of :mod:`holon_nb.providers.media`, cassettes), ``holon_nb.tools``. Pillow is imported
lazily, on the first image checked.

Consumes: the ports of :mod:`.ports` (the model catalog's environment, the settings), given by the runtime's
composition root.
"""

# internal (docs/api.md): the package exports no names itself; holon_nb imports from its modules
__all__: list[str] = []
