-- .luacheckrc — lint settings for ltorch's Lua (run: luacheck lua tools examples spec).
-- LuaJIT's standard library; methods may ignore `self`; generated files are not linted.
std = "luajit"
self = false
max_line_length = false
exclude_files = { "lua/torch/_gen/*.lua" }
files["spec/**/*.lua"] = { std = "+busted" }
