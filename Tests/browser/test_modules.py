"""The web client's module layout, read from the source (no browser, no server):

  - every relative import of Public/app.js and Public/js/**/*.js names a file that exists
    and the names it imports are exported there;
  - the views (Public/js/views/*.js) import one another in no cycle;
  - a page (a view Public/app.js routes to) is imported by no other view: what pages
    share lives in the modules beside them (Public/js/*.js), and a view imports only
    those and its own parts (the league page's host tools, news and ranking; the
    portfolio page's practice section);
  - no top-level function of a view is longer than LIMIT lines.

    python3 Tests/browser/test_modules.py
    python3 -m unittest Tests/browser/test_modules.py

The checks are plain functions over a folder laid out like Public/, so the tests at the
end plant a cycle, a page imported by another view, a long function and a missing export
in a temporary folder and show that each is found.
"""
import os
import re
import tempfile
import textwrap
import unittest

PUBLIC = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../Public"))
LIMIT = 150

IMPORT = re.compile(r"""(?:^|[;\s])(?:import|export)\s*(?P<names>[\w*{}\s,$]*?)\s*(?:from\s*)?['"](?P<path>[^'"]+)['"]""", re.M)
DYNAMIC_IMPORT = re.compile(r"""\bimport\(\s*['"](?P<path>[^'"]+)['"]\s*\)""")
EXPORT_DECLARATION = re.compile(r"^export\s+(?:default\s+)?(?:async\s+)?(?:function\s*\*?|class|const|let|var)\s+(?P<name>[\w$]+)", re.M)
EXPORT_LIST = re.compile(r"^export\s*\{(?P<names>[^}]*)\}", re.M)
FUNCTION = re.compile(r"^(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*(?P<name>[\w$]+)\s*\(", re.M)
ARROW = re.compile(r"^(?:export\s+)?(?:const|let|var)\s+(?P<name>[\w$]+)\s*=\s*(?:async\s+)?(?:\([^()]*(?:\([^()]*\)[^()]*)*\)|[\w$]+)\s*=>", re.M)


def modules(root):
    """The client's modules under `root` (a folder laid out like Public/): app.js and every
    js/**/*.js, as paths relative to root with forward slashes."""
    found = []
    if os.path.exists(os.path.join(root, "app.js")):
        found.append("app.js")
    for folder, _, files in os.walk(os.path.join(root, "js")):
        for name in files:
            if name.endswith(".js"):
                found.append(os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/"))
    return sorted(found)


def read(root, module):
    with open(os.path.join(root, module), encoding="utf-8") as f:
        return f.read()


def code_only(text):
    """The source with comments, strings, template literals and regular expressions
    blanked (newlines kept, so line numbers hold), for brace counting and finding
    declarations. Template substitutions (${…}) are kept as code."""
    out = []
    i, n = 0, len(text)
    # What a '/' after this character starts: a regular expression (else a division).
    regex_after = set("(,=:[!&|?{};+-*%<>~^") | {""}
    last = ""          # the last significant code character
    word = ""          # the last word of code, for `return /re/`
    templates = []     # brace depths at which a template literal's ${ was opened
    depth = 0

    def blank(segment):
        return "".join(c if c == "\n" else " " for c in segment)

    while i < n:
        c = text[i]
        if c == "/" and text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(blank(text[i:end]))
            i = end
            continue
        if c == "/" and text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(blank(text[i:end]))
            i = end
            continue
        if c in "'\"":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            closed = j < n and text[j] == c
            out.append(c + blank(text[i + 1:j]) + (c if closed else ""))
            i = j + 1 if closed else j
            last, word = c, ""
            continue
        if c == "`" or (c == "}" and templates and templates[-1] == depth):
            if c == "}":
                templates.pop()
            # A template literal's text, up to its end or its next ${.
            j = i + 1
            while j < n and text[j] != "`" and not text.startswith("${", j):
                j += 2 if text[j] == "\\" else 1
            if j < n and text[j] == "`":
                out.append(c + blank(text[i + 1:j]) + "`")
                i = j + 1
                last, word = "`", ""
            else:
                out.append(c + blank(text[i + 1:j]) + "${")
                templates.append(depth)
                i = j + 2
                last, word = "{", ""
            continue
        if c == "/" and (last in regex_after or word in ("return", "typeof", "case", "of", "in")):
            j, in_class = i + 1, False
            while j < n and text[j] != "\n":
                if text[j] == "\\":
                    j += 2
                    continue
                if text[j] == "[":
                    in_class = True
                elif text[j] == "]":
                    in_class = False
                elif text[j] == "/" and not in_class:
                    break
                j += 1
            out.append("/" + blank(text[i + 1:j]) + "/")
            i = j + 1
            while i < n and text[i].isalpha():
                out.append(text[i])
                i += 1
            last, word = "/", ""
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        out.append(c)
        if c.isalnum() or c in "_$":
            word = word + c if (last.isalnum() or last in "_$") else c
            last = c
        elif not c.isspace():
            last, word = c, ""
        i += 1
    return "".join(out)


def resolve(module, path):
    """The module a relative import of `module` names, relative to the root; None for a
    bare or absolute specifier."""
    if not path.startswith("."):
        return None
    return os.path.normpath(os.path.join(os.path.dirname(module), path)).replace(os.sep, "/")


def imported_names(clause):
    """`{ a, b as c }` → ['a', 'b']; a default or namespace import checks nothing."""
    match = re.search(r"\{([^}]*)\}", clause)
    if not match:
        return []
    names = []
    for part in match.group(1).split(","):
        part = part.strip()
        if part:
            names.append(part.split()[0])
    return names


def imports(root):
    """Each module's imports: {module: [(imported module, [names], line)]}."""
    graph = {}
    for module in modules(root):
        text = read(root, module)
        code = code_only(text)
        found = []
        # Import statements sit in code; their specifiers are strings, which code_only
        # blanks: find the statements in the code, read the specifier from the source.
        for match in re.finditer(r"(?:^|[;\s])(?:import|export)\b", code, re.M):
            statement = IMPORT.match(text, match.start())
            if statement and (statement.group("path").startswith(".") or statement.group("path").startswith("/")):
                target = resolve(module, statement.group("path"))
                if target:
                    line = text.count("\n", 0, statement.start("path")) + 1
                    found.append((target, imported_names(statement.group("names")), line))
        for match in re.finditer(r"\bimport\(", code):
            dynamic = DYNAMIC_IMPORT.match(text, match.start())
            if dynamic and resolve(module, dynamic.group("path")):
                found.append((resolve(module, dynamic.group("path")), [], text.count("\n", 0, match.start()) + 1))
        graph[module] = found
    return graph


def exports(root, module):
    code = code_only(read(root, module))
    names = {m.group("name") for m in EXPORT_DECLARATION.finditer(code)}
    for match in EXPORT_LIST.finditer(code):
        for part in match.group("names").split(","):
            words = part.split()
            if words:
                names.add(words[-1])
    return names


def broken_imports(root):
    """Imports of a file that is not there, or of a name its module does not export."""
    problems = []
    known = set(modules(root))
    for module, found in imports(root).items():
        for target, names, line in found:
            if target not in known:
                problems.append(f"{module}:{line}: imports {target}, which does not exist")
                continue
            missing = sorted(set(names) - exports(root, target))
            if missing:
                problems.append(f"{module}:{line}: imports {', '.join(missing)} from {target}, which does not export it")
    return problems


def is_view(module):
    return module.startswith("js/views/")


def view_cycles(root):
    """The cycles among the views' imports, each as the list of modules around it."""
    graph = {m: sorted({t for t, _, _ in found if is_view(t)}) for m, found in imports(root).items() if is_view(m)}
    cycles, state, stack = [], {}, []

    def visit(module):
        state[module] = "open"
        stack.append(module)
        for target in graph.get(module, []):
            if state.get(target) == "open":
                cycles.append(stack[stack.index(target):] + [target])
            elif target not in state:
                visit(target)
        stack.pop()
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module)
    return cycles


def pages(root):
    """The views app.js imports: the pages its routes draw."""
    return {t for t, _, _ in imports(root).get("app.js", []) if is_view(t)}


def pages_imported_by_views(root):
    routed = pages(root)
    return [f"{module}:{line}: imports the page {target}"
            for module, found in sorted(imports(root).items()) if is_view(module)
            for target, _, line in found if target in routed]


def top_level_functions(root, module):
    """Each top-level function of `module` (a declaration, or an arrow function assigned at
    the top level): (name, first line, last line)."""
    text = read(root, module)
    code = code_only(text)
    found = []
    for pattern, arrow in ((FUNCTION, False), (ARROW, True)):
        for match in pattern.finditer(code):
            start = match.start()
            if depth_at(code, start) != 0:
                continue
            end = function_end(code, match.end(), arrow)
            found.append((match.group("name"), code.count("\n", 0, start) + 1, code.count("\n", 0, end) + 1))
    return sorted(found, key=lambda f: f[1])


def depth_at(code, position):
    return code.count("{", 0, position) - code.count("}", 0, position)


def function_end(code, position, arrow):
    """Where a function ends: for a declaration whose parameter list opens just before
    `position`, its body's closing brace; for an arrow function whose `=>` ends there, its
    body's closing brace, or the end of its expression."""
    i = position
    if arrow:
        while i < len(code) and code[i].isspace():
            i += 1
        return matching(code, i) if i < len(code) and code[i] == "{" else expression_end(code, i)
    level = 1
    while i < len(code):
        c = code[i]
        if c in "([{" and level > 0:
            level += 1
        elif c in ")]}" and level > 0:
            level -= 1
        elif c == "{":
            return matching(code, i)
        i += 1
    return len(code) - 1


def matching(code, opening):
    level = 0
    for i in range(opening, len(code)):
        if code[i] == "{":
            level += 1
        elif code[i] == "}":
            level -= 1
            if level == 0:
                return i
    return len(code) - 1


def expression_end(code, start):
    level = 0
    for i in range(start, len(code)):
        c = code[i]
        if c in "([{":
            level += 1
        elif c in ")]}":
            level -= 1
            if level < 0:
                return i
        elif c == ";" and level == 0:
            return i
    return len(code) - 1


def long_functions(root, limit=LIMIT):
    """Top-level functions of the views longer than `limit` lines."""
    problems = []
    for module in modules(root):
        if not is_view(module):
            continue
        for name, first, last in top_level_functions(root, module):
            length = last - first + 1
            if length > limit:
                problems.append(f"{module}:{first}: {name} is {length} lines (at most {limit})")
    return problems


class ClientModules(unittest.TestCase):
    """The checks, on Public/."""

    def test_imports_resolve(self):
        self.assertEqual(broken_imports(PUBLIC), [])

    def test_no_cycle_among_views(self):
        self.assertEqual(view_cycles(PUBLIC), [])

    def test_no_view_imports_a_page(self):
        self.assertTrue(pages(PUBLIC), "app.js routes to no view: the check reads nothing")
        self.assertEqual(pages_imported_by_views(PUBLIC), [])

    def test_view_functions_are_short(self):
        self.assertTrue(top_level_functions(PUBLIC, "js/views/portfolio.js"), "no function found: the check reads nothing")
        self.assertEqual(long_functions(PUBLIC), [])


class ChecksFail(unittest.TestCase):
    """Each check finds what is planted for it in a folder laid out like Public/."""

    def plant(self, files):
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        for path, text in files.items():
            full = os.path.join(folder.name, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w", encoding="utf-8") as f:
                f.write(textwrap.dedent(text))
        return folder.name

    def test_a_cycle_is_found(self):
        root = self.plant({
            "app.js": "import { a } from './js/views/a.js';\n",
            "js/views/a.js": "import { b } from './b.js';\nexport function a() { return b(); }\n",
            "js/views/b.js": "import { h } from '../dom.js';\nimport { c } from './c.js';\nexport function b() { return h(c()); }\n",
            "js/views/c.js": "// import { x } from './x.js' is only a comment\nimport {\n  a,\n} from './a.js';\nexport const c = () => a;\n",
            "js/dom.js": "export function h() {}\n",
        })
        self.assertEqual(view_cycles(root), [["js/views/a.js", "js/views/b.js", "js/views/c.js", "js/views/a.js"]])
        self.assertEqual(broken_imports(root), [])

    def test_no_cycle_through_shared_modules(self):
        root = self.plant({
            "js/views/a.js": "import { s } from '../shared.js';\nexport function a() {}\n",
            "js/views/b.js": "import { s } from '../shared.js';\nimport { a } from './a.js';\nexport function b() {}\n",
            "js/shared.js": "export const s = 1;\n",
        })
        self.assertEqual(view_cycles(root), [])

    def test_a_page_imported_by_a_view_is_found(self):
        root = self.plant({
            "app.js": "import { a } from './js/views/a.js';\nimport { b } from './js/views/b.js';\n",
            "js/views/a.js": "export function a() {}\n",
            "js/views/b.js": "import { a } from './a.js';\nimport { part } from './part.js';\nexport function b() {}\n",
            "js/views/part.js": "export function part() {}\n",
        })
        self.assertEqual(pages_imported_by_views(root), ["js/views/b.js:1: imports the page js/views/a.js"])

    def test_a_missing_file_or_export_is_found(self):
        root = self.plant({
            "js/views/a.js": "import { gone, kept as k } from '../shared.js';\nimport { x } from './nowhere.js';\n",
            "js/shared.js": "export function kept() {}\nconst other = 1;\nexport { other as renamed };\n",
        })
        self.assertEqual(broken_imports(root), [
            "js/views/a.js:1: imports gone from js/shared.js, which does not export it",
            "js/views/a.js:2: imports js/views/nowhere.js, which does not exist",
        ])

    def test_a_long_function_is_found(self):
        body = "".join(f"  const x{i} = '}}' + `${{ {{ a: {i} }}.a }}` + /[}}]/.source; // }}\n" for i in range(LIMIT))
        root = self.plant({
            "js/views/long.js": (
                "export async function long(root) {\n" + body + "}\n"
                "function short() {\n  return { a: '{' };\n}\n"
                "const arrow = (a, b) => {\n  return a + b;\n};\n"
                "export const spread = (x) => h('p', {},\n  x);\n"
            ),
            "js/other.js": "export function notAView() {\n" + "  1;\n" * (LIMIT + 5) + "}\n",
        })
        self.assertEqual(top_level_functions(root, "js/views/long.js"),
                         [("long", 1, LIMIT + 2), ("short", LIMIT + 3, LIMIT + 5), ("arrow", LIMIT + 6, LIMIT + 8),
                          ("spread", LIMIT + 9, LIMIT + 10)])
        self.assertEqual(long_functions(root), [f"js/views/long.js:1: long is {LIMIT + 2} lines (at most {LIMIT})"])

    def test_a_function_at_the_limit_passes(self):
        root = self.plant({"js/views/ok.js": "function ok() {\n" + "  1;\n" * (LIMIT - 2) + "}\n"})
        self.assertEqual(top_level_functions(root, "js/views/ok.js"), [("ok", 1, LIMIT)])
        self.assertEqual(long_functions(root), [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
