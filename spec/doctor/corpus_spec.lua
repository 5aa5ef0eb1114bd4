-- spec/doctor/corpus_spec.lua — torch.doctor never cries wolf: on every correct training script of
-- spec/doctor/corpus/ (tabular regression and classification small and noisy, heavy class
-- imbalance binary and multiclass, CNNs on images and signals, an autoencoder, a language model,
-- LBFGS with a closure, multi-output and sequence targets, a slow starter, real text and images)
-- it reports no FAIL and no WARN. Each script asserts the metric in its header when run alone;
-- DOCTOR_CORPUS=all also runs each alone to check it.
--
-- Each doctor run is its own ltorch process (spec/support/fresh_process.lua): the probes train a
-- few dozen models per script, and a process of its own hands their memory back when it ends.
local fresh = require "spec.support.fresh_process"

local full = os.getenv("DOCTOR_CORPUS") == "all"

local function corpus()
  local names = {}
  local p = io.popen("ls spec/doctor/corpus/*.lua")
  for line in p:lines() do names[#names + 1] = line:match("([%w_]+)%.lua$") end
  p:close()
  return names
end

-- Doctor on one script, in a child process: its unexplained FAIL/WARN findings, its cause, and
-- whether label_alignment ran.
local function doctor_in_child(path)
  return fresh.run(([[
local r = require("torch.doctor").run(%q, { quiet = true, out_dir = false })
local alarms = {}
for _, f in ipairs(r.findings) do
  if (f.verdict == "fail" or f.verdict == "warn") and not f.explained_by then
    alarms[#alarms + 1] = f.id .. ": " .. f.title .. " | " .. tostring(f.evidence)
  end
end
print(require("cjson").encode({ alarms = alarms, cause = r.cause and r.cause.id or false,
  label_alignment = r:get("label_alignment") and r:get("label_alignment").verdict or false }))]]):format(path))
end

describe("doctor on the corpus of correct scripts", function()
  local names = corpus()

  it("holds at least 15 scripts", function()
    assert.is_true(#names >= 15, #names .. " scripts")
  end)

  for _, name in ipairs(names) do
    local path = "spec/doctor/corpus/" .. name .. ".lua"
    it("raises no alarm on " .. name, function()
      local r = doctor_in_child(path)
      assert.are.same({}, r.alarms)
      assert.is_false(r.cause)
      assert.is_string(r.label_alignment)
    end)
    if full then
      it(name .. " trains to its stated metric when run alone", function()
        local ok = os.execute("build/ltorch " .. path .. " > /dev/null")
        assert.is_truthy(ok == true or ok == 0)
      end)
    end
  end
end)
