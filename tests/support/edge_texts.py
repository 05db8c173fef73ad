"""Texts at the edges of every spelling (whitespace of every kind, marks in the text, scripts
without spaces, emoji sequences, special surfaces), shared by the interoperability tests."""

EDGE_TEXTS = [
    "", " ", "   ", "\n", "\r\n", "a", "a ", " a", "  a  b   c  ", "tab\tinside\tword", "new\nline inside",
    "no\xa0break space", "ideographic\u3000space", "emoji 😀🎉 and 👩‍👩‍👧", "combining e\u0301 a\u0300",
    "中文字符测试 日本語のテキスト", "digits 12345 3.14159 1,000,000", "don't it's rock'n'roll",
    "unknown ☃ ⌘ \U0001F9EC chars", "ÿ Ā ß", "mark </w> in text", "x</w>y", "</w>", "a</w>",
    "aaaaaaaaaaaaaaaaaaaaaa", "é", "<|endoftext|> [UNK] [CLS]",
]
