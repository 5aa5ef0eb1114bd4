--[[
  spec/lint_spec.lua — the Lua sources pass luacheck with the repository's .luacheckrc, so a new
  warning (an unused variable, a shadowed upvalue, an accidental global) fails the suite and CI.

  What: runs `luacheck --no-color --codes lua recipes tools templates bench spec examples` and
  expects "0 warnings / 0 errors"; on failure the message lists each warning.
  Run:  build/ltorch /usr/bin/busted spec/lint_spec.lua       (~10 s; needs Debian's lua-check)
]]
describe("luacheck", function()
  it("reports no warnings in lua/ recipes/ tools/ templates/ bench/ spec/ examples/", function()
    local p = assert(io.popen("luacheck --no-color --codes lua recipes tools templates bench spec examples 2>&1; echo \"exit=$?\""))
    local out = p:read("*a")
    p:close()
    assert.truthy(out:find("Total: ", 1, true), "luacheck did not run (Debian package lua-check):\n" .. out)
    local warnings = {}
    for line in out:gmatch("[^\n]+") do
      if line:match("^%s+%S+:%d+:%d+: ") then warnings[#warnings + 1] = line:gsub("^%s+", "") end
    end
    assert.are.equal(0, #warnings, table.concat(warnings, "\n"))
    assert.truthy(out:match("Total: 0 warnings / 0 errors"), out)
  end)
end)
