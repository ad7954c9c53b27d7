"""A griffe extension (mkdocs.yml: mkdocstrings' `extensions:`): a "Call arguments:" section is a parameters table.

The layers and pipelines document what `__call__` takes in a Keras-style "Call arguments:" section of the class
docstring, written like "Args:" (`name: description`, continuation lines indented). Google-style parsing does not
know that title and would show the block as one run-on paragraph in an admonition; here it becomes a table
like the constructor's "Args:", titled "Call arguments".
"""

import functools
import re
import textwrap

import griffe

TITLE = "call arguments"
_ITEM = re.compile(r"^(\*{0,2}[A-Za-z_]\w*)\s*(?:\(([^)]*)\))?:\s*(.*)$")


def call_arguments(contents):
    """The `DocstringParameter`s of a "Call arguments:" block; None when a line does not read `name: text`."""
    parameters = []
    for line in textwrap.dedent(contents).splitlines():
        match = _ITEM.match(line)
        if match and not line[:1].isspace():
            name, annotation, description = match.groups()
            parameters.append([name, annotation, [description]])
        elif parameters and (line[:1].isspace() or not line.strip()):
            parameters[-1][2].append(line.strip())
        else:
            return None
    return [griffe.DocstringParameter(name=name, annotation=annotation,
                                      description="\n".join(lines).strip())
            for name, annotation, lines in parameters]


class _WithCallArguments(griffe.Docstring):
    """A docstring whose "Call arguments:" admonition is parsed as a parameters section (still parsed lazily, at
    render time, with the handler's parser and options, as every other docstring)."""

    @functools.cached_property
    def parsed(self):
        sections = self.parse()
        for index, section in enumerate(sections):
            if section.kind is griffe.DocstringSectionKind.admonition and (section.title or "").lower() == TITLE:
                parameters = call_arguments(section.value.contents)
                if parameters:
                    sections[index] = griffe.DocstringSectionParameters(parameters, title="Call arguments")
        return sections


class CallArguments(griffe.Extension):
    def on_instance(self, *, obj, **kwargs):
        if obj.docstring is not None and "Call arguments:" in obj.docstring.value:
            obj.docstring.__class__ = _WithCallArguments
