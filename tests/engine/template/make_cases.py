#!/usr/bin/env python3
"""Writes template_cases.json: snippets of every construct, filter, test and
method the interpreter supports, each with the output Python's jinja2 gives
(or the fact that it raises), rendered by tests/reference/render_chat_template.py.

Run after changing the list: python3 tests/engine/template/make_cases.py
"""

import json
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
RENDERER = HERE.parent.parent / "reference" / "render_chat_template.py"
NOW = "2026-11-25T12:00:00"

C = {"xs": [3, 1, 2], "s": "  Hello World  ", "d": {"b": 2, "a": 1, "items": [5]}, "n": None, "t": True, "f": 1.5, "i": 7, "users": [{"name": "bo", "age": 30, "admin": True}, {"name": "Al", "age": 25, "admin": False}, {"name": "cy", "age": 35}], "u8": "héllo wörld", "e": "", "words": "a b  c"}
C2 = {"xs": [3, 1, 2], "s": "  Hello World  ", "d": {"b": 2, "a": 1, "items": [5]}, "n": None, "t": True, "f": 1.5, "i": 7, "users": [{"name": "bo", "age": 30, "admin": True}, {"name": "Al", "age": 25, "admin": False}, {"name": "cy", "age": 35}], "u8": "héllo wörld", "e": "", "words": "a b  c", "ml": "line1\nline2\n\nline4\n", "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Get the weather", "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "City name"}, "unit": {"type": "string", "enum": ["c", "f"]}}, "required": ["city"]}}}], "uni": "日本語 ✓ \u00e9 \"q\" \\ \n\t\u0001"}

CASES = [
 # text and whitespace control
 ["plain text"], ["a {{ 1 }} b"], ["a\n{% if true %}\nyes\n{% endif %}\nb"], ["  {% if true %}x{% endif %}  \n"],
 ["a\n  {% if true %}\n  x\n  {% endif %}\nb"], ["a {%- if true -%} b {%- endif -%} c"], ["a  {{- 1 -}}  b"], ["{# c #}\nx"], ["a\n  {# c #}\nb"],
 ["a {#- c -#} b"], ["  {%+ if true %}x{% endif %}"], ["{% if true +%}\nx{% endif %}"], ["x\n"], ["x\n\n"], ["a\r\nb\rc"], ["{% raw %}{{ x }}{% endraw %}"],
 ["{%- raw -%}  {{ y }}  {%- endraw -%}"], ["  {{ 'v' }}\n  {% if true %}z{% endif %}"], ["{% for x in xs %}\n  {{ x }}\n{% endfor %}\n", C],
 ["{% for x in xs %}  {{ x }}{% endfor %}", C], ["{{ 1 }}\n{% if true %}\n  a\n{% endif %}"], ["\t{% if true %}t{% endif %}"], ["{% if true %}a{% endif %}  \n  {% if true %}b{% endif %}"],
 # literals
 ["{{ 'a\\nb' }}|{{ \"q'\" }}|{{ 'x' 'y' }}|{{ '\\u00e9\\x41\\t' }}"], ["{{ 1 }} {{ -1 }} {{ 1.0 }} {{ 1e-5 }} {{ 1e16 }} {{ 2.5e10 }} {{ 0.1 }} {{ 1_000 }} {{ 3.14159265358979 }}"],
 ["{{ true }} {{ True }} {{ false }} {{ none }} {{ None }}"], ["{{ [1, 'a', none, true, 1.5] }} {{ (1,) }} {{ (1, 2) }} {{ () }} {{ {'a': 1, 'b': [2]} }}"],
 ["{{ ['it\\'s', \"q\\\"\", 'n\\n', 'tab\\t', 'uni é', '\\x01'] }}"], ["{{ {'k': none} }} {{ [[]] }} {{ {} }}"],
 # access
 ["{{ d.a }} {{ d['b'] }} {{ d['items'] }} {{ d.zz }}|{{ xs[0] }} {{ xs[-1] }} {{ xs[5] }}|{{ s[2] }}", C],
 ["{{ xs[1:] }} {{ xs[::-1] }} {{ xs[:-1] }} {{ xs[::2] }} {{ s[2:7] }} {{ s[::-1] }} {{ u8[1:4] }} {{ u8[::-2] }} {{ xs[5:] }} {{ xs[-10:2] }}", C],
 ["{{ users[0].name }} {{ users.0.name }} {{ n.x }}|{{ users[0]['nope'] }}", C],
 # operators
 ["{{ 7 / 2 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 2 ** 10 }} {{ 2 ** -1 }} {{ 1 + 2.0 }} {{ 6 / 3 }} {{ 7.5 // 2 }} {{ 5 % -3 }}"],
 ["{{ 'a' ~ 1 ~ none ~ true }} {{ 'a' + 'b' }} {{ [1] + [2] }} {{ 'ab' * 3 }} {{ 3 * 'x' }} {{ [0] * 2 }} {{ -(3) }} {{ +3 }}"],
 ["{{ 1 < 2 < 3 }} {{ 1 < 3 < 2 }} {{ 'a' < 'b' }} {{ [1, 2] < [1, 3] }} {{ 1 == 1.0 }} {{ true == 1 }} {{ 'a' != 'b' }} {{ 2 >= 2 }} {{ (1, 2) == [1, 2] }}"],
 ["{{ 'ell' in 'hello' }} {{ 2 in xs }} {{ 'a' in d }} {{ 'z' not in d }} {{ 5 not in xs }}", C],
 ["{{ 0 or 'x' }} {{ 1 and 'y' }} {{ '' and 'z' }} {{ none or [] }} {{ not 0 }} {{ not 'a' }}"],
 ["{{ 'y' if t else 'n' }} {{ 'y' if n else 'n' }} {{ 'y' if n }}|{{ 1 if false else 2 if true else 3 }}", C],
 ["{{ 1 + 2 * 3 - 4 / 2 }} {{ (1 + 2) * 3 }} {{ 2 ** 3 ** 2 }} {{ -2 ** 2 }} {{ 10 - 2 - 3 }} {{ 'a' ~ 1 + 2 }}"],
 ["{{ 1 < 'a' }}"], ["{{ 'a' + 1 }}"], ["{{ none + 1 }}"], ["{{ 1 / 0 }}"], ["{{ [1] < 'a' }}"], ["{{ 1 in 'abc' }}"], ["{{ 5 in 5 }}"],
 # undefined
 ["{{ u }}|{{ u is defined }}|{{ u is undefined }}|{{ u|length }}|{% for x in u %}x{% endfor %}|{{ u or 'dflt' }}|{{ 'a' ~ u }}|{{ u == u }}|{{ not u }}"],
 ["{{ u.x }}"], ["{{ u['x'] }}"], ["{{ u + 1 }}"], ["{{ u() }}"], ["{{ d.zz.yy }}", C], ["{{ d.zz is defined }}{{ d.zz|default('D') }}{{ n|default('D') }}{{ n|default('D', true) }}{{ e|d('E', true) }}", C],
 ["{{ u|upper }}|{{ u|trim }}|{{ u|list }}|{{ u|tojson }}"], ["{{ u|int }}"], ["{{ u|first }}"], ["{{ 1 in u }}{{ u in [1] }}"],
 # statements
 ["{% for x in xs %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}|{% endfor %}", C],
 ["{% for x in xs %}{{ loop.previtem }}-{{ loop.nextitem }}-{{ loop.cycle('a', 'b') }};{% endfor %}", C],
 ["{% for k, v in d.items() %}{{ k }}={{ v }},{% endfor %}|{% for k in d %}{{ k }}{% endfor %}|{% for c in 'ab' %}{{ c }}.{% endfor %}", C],
 ["{% for x in xs if x > 1 %}{{ x }}{{ loop.index }}{{ loop.length }},{% endfor %}", C], ["{% for x in [] %}a{% else %}empty{% endfor %}"], ["{% for x in xs if x > 10 %}a{% else %}none{% endfor %}", C],
 ["{% for x in xs %}{% if x == 1 %}{% continue %}{% endif %}{% if x == 2 %}{% break %}{% endif %}{{ x }}{% endfor %}", {"xs": [3, 1, 4, 2, 5]}],
 ["{% for x in xs|sort %}{{ x }}{% endfor %}{% for x in xs|reverse|list %}{{ x }}{% endfor %}", C],
 ["{% for a, b in [[1, 2], [3, 4]] %}{{ a + b }}{% endfor %}|{% for (a, b) in [(1, 2)] %}{{ a }}{{ b }}{% endfor %}"],
 ["{% for row in [[1, 2], [3]] %}{% for x in row %}{{ loop.index }}{{ x }}{% endfor %}{{ loop.index }};{% endfor %}"],
 ["{% if 0 %}a{% elif '' %}b{% elif [1] %}c{% else %}d{% endif %}{% if none %}x{% else %}y{% endif %}"],
 ["{% set x = 1 %}{% set y = x + 1 %}{{ x }}{{ y }}{% set a, b = 1, 2 %}{{ a }}{{ b }}{% set t = 1, %}{{ t }}"],
 ["{% set x = 1 %}{% for i in xs %}{{ x }}{% set x = i %}{{ x }},{% endfor %}{{ x }}", C], ["{% set x = 1 %}{% if true %}{% set x = 2 %}{% endif %}{{ x }}"],
 ["{% set ns = namespace(found=false, n=0) %}{% for x in xs %}{% if x == 1 %}{% set ns.found = true %}{% endif %}{% set ns.n = ns.n + x %}{% endfor %}{{ ns.found }} {{ ns.n }} {{ ns }}", C],
 ["{% set ns = namespace() %}{% set ns.a = 'x' %}{{ ns.a }}{{ ns.b }}|{% set ns2 = namespace({'k': 1}, j=2) %}{{ ns2.k }}{{ ns2.j }}{{ ns2['k'] }}"],
 ["{% set x %}block {{ 1 + 1 }}{% endset %}[{{ x }}]{% set y | upper %}up{% endset %}{{ y }}"],
 ["{% set s = 1 %}{% set s.a = 2 %}"],
 ["{% macro greet(name, greeting='Hello') %}{{ greeting }}, {{ name }}!{% endmacro %}{{ greet('A') }} {{ greet('B', 'Hi') }} {{ greet(name='C', greeting='Yo') }} {{ greet() }}"],
 ["{% macro m(x) %}[{{ x }}]{% if x > 0 %}{{ m(x - 1) }}{% endif %}{% endmacro %}{{ m(3) }}"],
 ["{% macro m() %}{{ y }}{% endmacro %}{% set y = 1 %}{{ m() }}{% set y = 2 %}{{ m() }}"], ["{% macro m(a) %}{{ a }}{% endmacro %}{{ m(1, 2) }}"],
 ["{% macro wrap() %}<{{ caller() }}>{% endmacro %}{% call wrap() %}inner {{ 1 }}{% endcall %}"],
 ["{% macro each(xs) %}{% for x in xs %}{{ caller(x) }}{% endfor %}{% endmacro %}{% call(item) each([1, 2]) %}({{ item }}){% endcall %}"],
 ["{% filter upper %}hello {{ 'x' }}{% endfilter %}|{% filter trim|upper %}  a  {% endfilter %}"],
 ["{% with a = 1, b = 2 %}{{ a + b }}{% endwith %}{{ a }}"],
 ["{% for i in range(3) %}{{ i }}{% endfor %} {{ range(1, 10, 3)|list }} {{ range(5, 0, -2)|list }} {{ range(0)|list }}"],
 ["{{ dict(a=1, b='x') }} {{ dict() }}"], ["{{ strftime_now('%d %b %Y') }}|{{ strftime_now('%Y-%m-%d %H:%M:%S %A %a %B %j %y') }}|{{ strftime_now('%-d') }}"],
 ["{{ raise_exception('Bad: roles must alternate') }}"],


 ["{{ s|trim }}|{{ s|trim('  Hd') }}|{{ s|length }}|{{ xs|count }}|{{ d|length }}|{{ u8|length }}|{{ s|upper }}|{{ s|lower }}", C2],
 ["{{ tools|tojson }}", C2], ["{{ tools|tojson(indent=4) }}", C2], ["{{ tools[0]|tojson(indent=2, sort_keys=true) }}", C2], ["{{ d|tojson(separators=(',', ':')) }}", C2],
 ["{{ uni|tojson }}|{{ [1.0, 1e-7, true, none, 'x']|tojson }}|{{ {1: 'a', none: 2, true: 3}|tojson }}|{{ []|tojson(indent=2) }}{{ {}|tojson(indent=2) }}|{{ 'x'|tojson(indent=0) }}|{{ [1]|tojson(indent=0) }}", C2],
 ["{{ (1, 2)|tojson }}|{{ d|tojson(indent='\\t') }}", C2],
 ["{{ s|replace('l', 'L') }}|{{ s|replace('l', 'L', 2) }}|{{ 'aaa'|replace('', '-') }}|{{ 'abc'.replace('b', 'X') }}|{{ 123|replace(2, 9) }}", C2],
 ["{{ xs|join(', ') }}|{{ users|join(', ', attribute='name') }}|{{ 'abc'|join('-') }}|{{ xs|join }}", C2],
 ["{{ xs|first }} {{ xs|last }} {{ 'abc'|first }} {{ 'abc'|last }} {{ []|first }}|{{ d|first }}|{{ xs|list }} {{ 'ab'|list }} {{ d|list }}", C2],
 ["{{ users|map(attribute='name')|list }} {{ xs|map('string')|list }} {{ ['a', 'B']|map('upper')|join }} {{ users|map(attribute='zz', default='?')|list }} {{ xs|map('int')|sum }}", C2],
 ["{{ xs|select('odd')|list }} {{ xs|reject('odd')|list }} {{ [0, 1, '', 'a', none]|select|list }} {{ xs|select('gt', 1)|list }} {{ xs|select('equalto', 3)|list }} {{ xs|select('in', [1, 2])|list }}", C2],
 ["{{ users|selectattr('admin')|map(attribute='name')|list }} {{ users|rejectattr('admin')|map(attribute='name')|list }} {{ users|selectattr('age', '>', 26)|map(attribute='name')|join(',') }} {{ users|selectattr('name', 'equalto', 'Al')|list|length }} {{ users|selectattr('admin', 'defined')|list|length }}", C2],
 ["{{ d|items|list }} {% for k, v in d|items %}{{ k }}{% endfor %} {{ d|dictsort }} {{ d|dictsort(by='value', reverse=true) }}", C2],
 ["{{ 1|string ~ 2 }} {{ none|string }} {{ xs|string }} {{ '<b>'|safe }} {{ '<b>&'|e }} {{ \"'\"|escape }}", C2],
 ["[{{ ml|indent }}]|[{{ ml|indent(2, true) }}]|[{{ ml|indent(2, first=true, blank=true) }}]|[{{ 'a\\nb'|indent('> ') }}]|[{{ ''|indent }}]", C2],
 ["{{ 'hELLO wORLD'|capitalize }} {{ 'hello big-world (x) [y]z'|title }} {{ \"it's o'neil\"|title }} {{ 'hello world'.title() }} {{ \"it's\".title() }} {{ 'aBc'.capitalize() }}", C2],
 ["{{ '42'|int }} {{ ' 42 '|int }} {{ '4.7'|int }} {{ 'x'|int }} {{ 'x'|int(5) }} {{ 4.9|int }} {{ -4.9|int }} {{ true|int }} {{ '0x1F'|int(0, 16) }} {{ '0b101'|int(base=2) }} {{ none|int }}", C2],
 ["{{ '1.5'|float }} {{ 2|float }} {{ 'x'|float }} {{ 'x'|float(1) }} {{ -3|abs }} {{ -2.5|abs }} {{ 2.5|round }} {{ 3.5|round }} {{ 2.675|round(2) }} {{ 7|round }} {{ 2.4|round(method='ceil') }} {{ 2.6|round(0, 'floor') }} {{ 1.23456|round(3) }}", C2],
 ["{{ [1, 2, 1, 3]|unique|list }} {{ ['a', 'A', 'b']|unique|list }} {{ ['a', 'A']|unique(case_sensitive=true)|list }} {{ users|unique(attribute='admin')|map(attribute='name')|list }}", C2],
 ["{{ xs|sort }} {{ xs|sort(reverse=true) }} {{ ['b', 'A', 'c']|sort }} {{ ['b', 'A', 'c']|sort(case_sensitive=true) }} {{ users|sort(attribute='age')|map(attribute='name')|join }} {{ users|sort(attribute='name')|map(attribute='name')|join }}", C2],
 ["{{ xs|reverse|list }} {{ 'abc'|reverse }} {{ xs|sum }} {{ users|sum(attribute='age') }} {{ [1.5, 2]|sum }} {{ xs|sum(start=10) }} {{ xs|min }} {{ xs|max }} {{ ['b', 'A']|min }} {{ users|max(attribute='age') }} {{ []|max }}", C2],
 ["{{ [1,2,3,4,5]|batch(2)|list }} {{ [1,2,3,4,5]|batch(2, 'x')|list }} {{ [1,2,3,4,5]|slice(2)|list }} {{ [1,2,3,4,5]|slice(3, 0)|list }}", C2],
 ["{{ 'a b, c_d  e'|wordcount }} {{ 'ab'|center(7) }}|{{ 'abc'|center(6) }}|{{ 'x'|center }}|", C2],
 ["{{ '%s-%s'|format('a', 1) }} {{ '%d%%'|format(50) }} {{ '%5.1f|%-5s|%05d|%+d|%x|%r'|format(3.14159, 'ab', 42, 5, 255, 'q') }} {{ '%(a)s'|format(a=1) }} {{ 'hi %s' % 'x' }} {{ '%s and %s' % (1, 2) }} {{ '%.2s'|format('abc') }} {{ '%i'|format(3.9) }} {{ '%e %g'|format(12345.678, 0.0001) }}", C2],
 ["{{ 'The quick brown fox jumps'|truncate(10) }}|{{ 'The quick brown fox jumps'|truncate(10, true) }}|{{ 'The quick brown fox'|truncate(17) }}|{{ 'short'|truncate(3, end='!', leeway=0) }}|{{ 'The quick brown'|truncate(9, false, '..', 0) }}", C2],
 # tests
 ["{{ none is none }} {{ 1 is none }} {{ 'a' is string }} {{ 1 is string }} {{ d is mapping }} {{ xs is mapping }} {{ xs is iterable }} {{ 1 is iterable }} {{ 'a' is iterable }} {{ 1 is number }} {{ 1.5 is number }} {{ true is number }} {{ 'a' is number }}", C2],
 ["{{ 1 is integer }} {{ 1.0 is integer }} {{ true is integer }} {{ 1.0 is float }} {{ 1 is float }} {{ xs is sequence }} {{ 'a' is sequence }} {{ d is sequence }} {{ 1 is sequence }} {{ true is boolean }} {{ 1 is boolean }} {{ range is callable }} {{ 1 is callable }} {{ d.get is callable }}", C2],
 ["{{ 1 is equalto 1 }} {{ 1 is eq 2 }} {{ 1 is == 1 }} {{ 1 is ne 2 }} {{ 1 is lt 2 }} {{ 2 is gt 1 }} {{ 2 is le 2 }} {{ 2 is ge 3 }} {{ 1 is in xs }} {{ 9 is in xs }} {{ true is true }} {{ 1 is true }} {{ false is false }} {{ 0 is false }}", C2],
 ["{{ 3 is odd }} {{ 3 is even }} {{ 4 is even }} {{ 9 is divisibleby 3 }} {{ 9 is divisibleby(4) }} {{ 'abc' is lower }} {{ 'aBc' is lower }} {{ 'ABC' is upper }} {{ '1' is upper }} {{ none is sameas none }} {{ true is sameas true }} {{ 1 is sameas true }} {{ xs is sameas xs }}", C2],
 ["{{ x is not defined }} {{ xs is not none }} {{ not xs is none }} {{ 'upper' is filter }} {{ 'nope' is filter }} {{ 'odd' is test }} {{ 2 is not divisibleby 2 }}", C2],
 # methods
 ["{{ s.strip() }}|{{ s.lstrip() }}|{{ s.rstrip() }}|{{ 'xxaxx'.strip('x') }}|{{ '--a-b--'.lstrip('-') }}|{{ '..a..'.rstrip('.') }}|{{ '\\n\\t a \\n'.strip() }}|{{ 'abc'.strip('') }}", C2],
 ["{{ 'a,b,,c'.split(',') }} {{ '  a  b c  '.split() }} {{ 'a b c d'.split(' ', 2) }} {{ 'a b c d'.rsplit(' ', 1) }} {{ '  a  b  c  '.split(none, 1) }} {{ '  a  b  c  '.rsplit(none, 1) }} {{ ''.split() }} {{ ''.split(',') }} {{ 'a<|>b'.split('<|>') }}", C2],
 ["{{ 'hello'.startswith('he') }} {{ 'hello'.startswith(('x', 'h')) }} {{ 'hello'.endswith('lo') }} {{ 'hello'.endswith(('a', 'b')) }} {{ 'hello'.startswith('l', 2) }} {{ 'héllo'.upper() }} {{ 'ABC'.lower() }} {{ 'aaa'.replace('a', 'b', 2) }}", C2],
 ["{{ 'hello'.find('l') }} {{ 'hello'.find('z') }} {{ 'héllo'.find('l') }} {{ 'hello'.rfind('l') }} {{ 'hello'.count('l') }} {{ ', '.join(['a', 'b']) }} {{ '-'.join('abc') }} {{ '12'.isdigit() }} {{ '1a'.isdigit() }} {{ 'ab'.isalpha() }} {{ ' \\n'.isspace() }} {{ ''.isspace() }}", C2],
 ["{{ '{} and {}'.format('a', 'b') }} {{ '{0}{1}{0}'.format('x', 'y') }} {{ '{name}!'.format(name='N') }} {{ '{:>5}|{:<4}|{:^6}|{:05d}|{:.2f}|{:,}'.format('r', 'l', 'c', 42, 3.14159, 1234567) }} {{ '{{}} {}'.format(1) }} {{ '{!r}'.format('q') }}", C2],
 ["{{ xs.index(1) }} {{ xs.count(3) }} {{ d.get('a') }} {{ d.get('z') }} {{ d.get('z', 'dflt') }} {{ d.keys()|list }} {{ d.values()|list }} {{ d.items()|list }}", C2],
 ["{{ xs.append(4) }}", C2], ["{{ xs.pop() }}", C2], ["{{ d.update({'c': 3}) }}", C2], ["{{ 'abc'.nope() }}", C2], ["{{ 'a'.removeprefix('x') }}{{ 'ab'.removeprefix('a') }}{{ 'ab'.removesuffix('b') }} {{ 'a\\nb\\r\\nc'.splitlines() }}", C2],
 # errors and parse
 ["{{ x|nofilter }}"], ["{% if false %}{{ x|nofilter }}{% endif %}"], ["{{ x is notatest }}"], ["{% include 'x' %}"], ["{% for x in xs %}"], ["{% if %}"], ["{{ 1 + }}"], ["{% endfor %}"], ["{{ 'abc' }"], ["{% break %}"],
 ["{{ range(200000)|length }}"], ["{% if false %}{{ 'x'|wordwrap }}{% endif %}ok"], ["{{ [1,2][0:2:0] }}"],
 ["{{ {'a': {'b': 1}} }}"], ["{{ {'a': 1}['a'] }}{{ {'a': {'b': [1, {'c': 'd'}]}}.a.b[1].c }}"], ["{{ xs|length > 2 and 'y' or 'n' }}{{ 'a' if xs|length else 'b' }}", C2],
 ["{{ 'a' ~ xs|length ~ 'b' }}{{ -xs|length }}{{ not xs|length }}", C2],
 ["{{ 1e300 * 1e300 }} {{ -1e300 * 1e300 }} {{ 3.0 }} {{ 100.0 }} {{ 1.5e-10 }} {{ 123456789.123 }} {{ 1e15 }} {{ 0.0001 }} {{ -0.0 }} {{ 1/3 }}"],
]


def main():
    requests = [
        {"template": case[0], "context": case[1] if len(case) > 1 else {}, "now": NOW}
        for case in CASES
    ]
    done = subprocess.run(
        [sys.executable, str(RENDERER)], input=json.dumps(requests), capture_output=True,
        text=True, check=True)
    rows = []
    for request, result in zip(requests, json.loads(done.stdout)):
        row = {"template": request["template"], "context": request["context"]}
        if result["ok"]:
            row["expected"] = result["text"]
        else:
            row["error"] = result["error"]
        rows.append(row)
    (HERE / "template_cases.json").write_text(
        json.dumps({"now": NOW, "cases": rows}, ensure_ascii=False, indent=1) + "\n",
        encoding="utf-8")
    print(f"{len(rows)} cases written")


if __name__ == "__main__":
    main()
