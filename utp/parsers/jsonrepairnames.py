"""The stable names of the repairs the lenient JSON reader makes.

Each is recorded in ``ToolCall.repairs`` and in reports, so scoring can tell a
clean call from a repaired one; the strings never change once published.
"""

TRAILING_COMMA = "removed trailing comma"
SINGLE_QUOTES = "single quotes to double"
PYTHON_LITERALS = "Python literals (True/False/None) to JSON"
UNQUOTED_KEYS = "quoted bare keys"
KEY_EQUALS = "key=value to key: value"
BAD_SEPARATOR = "malformed separator after key"
MISSING_COLON = "inserted missing colon"
COMMA_FOR_COLON = "comma where colon belongs"
ESCAPED_QUOTES = "unescaped backslash-escaped quotes"
CLOSED_TRUNCATED = "closed truncated JSON"
#: noted with CLOSED_TRUNCATED when the cut fell inside a string, or right after ``{``, ``[``,
#: ``,`` or ``:`` (more was clearly coming): the value is half written, so a call holding it is
#: reported, never run (:func:`utp.parsers.scanloop.try_extract`). A cut after a whole value
#: (``{"city": "Paris"``) only lost closing brackets, and is read.
CUT_MID_VALUE = "closed a value the text cut off mid-way"
TRAILING_GARBAGE = "ignored text after the JSON value"
#: ``{"arguments": {"a": 1}}}, "name": "f"}``: one ``}`` too many closed the object before its last members
STRAY_CLOSER = "dropped a stray } that closed the object early"
MISSING_COMMA = "inserted missing comma"
DOUBLE_ENCODED = "decoded double-encoded JSON string"
LIST_WRAPPED = "unwrapped single-object list"
DOUBLED_BRACES = "undid braces written doubled ({{ ... }})"
CONTROL_CHARS = "escaped control characters in strings"
LOOSE_NUMBER = "normalised number literal"
#: more digits than Python converts to a number: kept as its text, which validation reports
LONG_NUMBER_AS_TEXT = "kept a number too long to read as its text"
INNER_QUOTES = "kept unescaped quotes inside a string"
COMMENTS = "removed comments"
#: ``"it\\'s"``: JavaScript's and Python's escaped apostrophe inside a JSON string, read as the apostrophe
APOSTROPHE_ESCAPE = "read \\' as an apostrophe"
#: a word processor's or chat client's quotes, “…”, as a string's delimiters
TYPOGRAPHIC_QUOTES = "typographic quotes read as string quotes"
#: ``[{"name": "f", "arguments": {"a": 1}]``: a closer that belongs to an enclosing container
#: ends the inner ones whose closers were left out (models drop one brace of a call list)
MISSING_CLOSER = "closed containers whose closers were left out"
#: ``[(0, 0), (2, 3)]``: Python's tuples inside JSON, read as lists
PYTHON_TUPLE = "Python tuples read as lists"
#: ``{"function=webfetch", "arguments": {…}}``: a whole pair written inside one key's quotes
#: (Qwen3-Coder's ``<function=NAME>`` habit carried into JSON)
PAIR_IN_ONE_STRING = "key=value written as one quoted key"
#: ``"line 1\n" +\n"line 2"``: a long string written as JavaScript's (or Python's) ``+`` of pieces
STRING_CONCATENATION = "joined string pieces written with +"
#: ``{""city": …}``, ``[" "Paris"]``: a quote (and blanks) written before a string's own opening
#: quote, a word glued to where that stray "string" closed (Qwen 3.5 4B's recorded replies)
STRAY_OPENING_QUOTE = "dropped a stray quote before a string"
#: ```"content": `import React from "react";…` ```: a value written as a JavaScript template literal
#: (backticks, raw line breaks and quotes inside), as qwen2.5-coder under Ollama writes file contents
TEMPLATE_LITERAL = "read a JavaScript template literal (backticks) as a string"
