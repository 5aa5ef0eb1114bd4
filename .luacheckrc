-- .luacheckrc — lint settings for ltorch's Lua. Run: luacheck lua recipes tools templates bench spec
-- (spec/lint_spec.lua runs exactly this in the suite, so CI fails on a new warning).
-- LuaJIT's standard library; methods may ignore `self`; generated files are not linted.
-- Ignored on purpose: 581 ('not (x > y)'): the negated comparisons are NaN-aware (not (nan > 0)
-- is true, nan <= 0 is false) and guard against NaN arguments.
std = "luajit"
self = false
max_line_length = false
ignore = { "581" }
read_globals = { "_LTORCH" }   -- set by the runtime host (runtime/host.c) before any script runs
exclude_files = { "lua/torch/_gen/*.lua" }
files["spec/**/*.lua"] = { std = "+busted" }
files["templates/*/spec/*.lua"] = { std = "+busted" }
-- The doctor's corpus is training scripts written as people write them (`for epoch = 1, n do`
-- with the epoch unused): unused loop variables are part of the style it must accept.
files["spec/doctor/corpus/*.lua"] = { std = "+busted", ignore = { "213" } }
