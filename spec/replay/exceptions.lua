--[[
  spec/replay/exceptions.lua — the entries of PyTorch's test databases that ltorch does not yet
  replay cleanly (issue #36), by database and entry, each with its category and reason:
    missing      ltorch has no such name
    refuses      ltorch raises an argument error for PyTorch's call
    raises       ltorch raises otherwise where PyTorch returns
    grad_raises  backward raises where PyTorch's does not
    no_error     an error input: PyTorch raises, ltorch returns
    state_dict   the module's state_dict keys differ from PyTorch's
    crash        the case killed its process (a bug: the reason names it)
  A silent difference (categories differs and grad: another value, dtype, shape or gradient
  returned without error) can never be listed: it is a bug to fix. spec/replay/*_db_spec.lua fail
  for an unlisted failure and for a listed one that no longer occurs: delete the line when fixed.
]]
return {
  ops = {
  },
  modules = {
  },
  optims = {
  },
}
