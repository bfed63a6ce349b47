"""MkDocs hook: the pages generated from the code (ropespec/docsite.py) join the site's files at build time, so that
the home page is README and the reference pages say what the code says, never a copy that could drift from it."""

from mkdocs.structure.files import File

from ropespec import docsite


def on_files(files, config):
    for path, text in docsite.pages().items():
        files.append(File.generated(config, path, content=text))
    return files
