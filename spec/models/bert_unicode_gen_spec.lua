--[[
  spec/models/bert_unicode_gen_spec.lua — recipes/models/bert_unicode_gen.lua is what
  tools/gen_bert_unicode.py writes today from the pinned reference tokenizer (regenerated into a
  temp file and compared byte for byte). Pending without the model files or tokenizers in .venv.

  Run: build/ltorch /usr/bin/busted spec/models/bert_unicode_gen_spec.lua   (~6 s on 2 cores)
]]
local pytorch = require "spec.support.pytorch"
local minilm = require "recipes.models.minilm"

local function slurp(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return s
end

describe("recipes/models/bert_unicode_gen.lua", function()
  it("is what tools/gen_bert_unicode.py generates", function()
    local missing = minilm.missing()
    if missing then return pending(missing) end
    local out = os.tmpname()
    local p = io.popen(("'%s' tools/gen_bert_unicode.py '%s' '%s' 2>&1 </dev/null; echo \"exit=$?\"")
      :format(pytorch.python, minilm.default_dir(), out))
    local log = p:read("*a")
    p:close()
    local fresh = slurp(out)
    os.remove(out)
    if not log:find("exit=0", 1, true) then return pending("tools/gen_bert_unicode.py failed (tokenizers in .venv?): " .. log) end
    assert.truthy(fresh == slurp("recipes/models/bert_unicode_gen.lua"),
      "recipes/models/bert_unicode_gen.lua is stale: rerun .venv/bin/python tools/gen_bert_unicode.py")
  end)
end)
