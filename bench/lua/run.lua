-- run.lua - time the Lua twins of the scanback benchmarks.
--   lua5.4 bench/lua/run.lua NAME [N]    time N cycles (default 1000) of bench/lua/NAME.lua
--   lua5.4 bench/lua/run.lua all [N]     every benchmark, one after the other
-- Prints "NAME ns_per_cycle" (CPU time from os.clock()) and then the results after N cycles.
-- Each benchmark is loaded fresh, so the results are those of cycles 1..N.
local dir = (arg[0]:match('^(.*)[/\\]') or '.') .. '/'
local all = {'loops', 'gcd', 'sieve', 'case_sm', 'pid', 'strings', 'plant', 'sort', 'ring'}

local function show(v)
  if math.type(v) == 'float' then return string.format('%.17g', v) end
  if type(v) == 'string' then return "'" .. v .. "'" end
  if type(v) == 'table' then
    local t, i = {}, (v[0] ~= nil) and 0 or 1
    while v[i] ~= nil do t[#t + 1] = show(v[i]); i = i + 1 end
    return '[' .. table.concat(t, ', ') .. ']'
  end
  return tostring(v)
end

local function run(name, n)
  local b = dofile(dir .. name .. '.lua')
  local t0 = os.clock()
  for _ = 1, n do b.cycle() end
  local dt = os.clock() - t0
  print(string.format('%s %.0f', name, dt * 1e9 / n))
  local r = b.result()
  local keys = {}
  for k in pairs(r) do if k ~= 'checksum' then keys[#keys + 1] = k end end
  table.sort(keys)
  table.insert(keys, 1, 'checksum')
  for _, k in ipairs(keys) do print('  ' .. k .. '=' .. show(r[k])) end
end

local name, n = arg[1], math.tointeger(tonumber(arg[2] or '1000'))
if not name or not n or n < 1 then
  io.stderr:write('usage: lua5.4 run.lua NAME|all [N]\n  NAME: ' .. table.concat(all, ' ') .. '\n')
  os.exit(2)
end
if name == 'all' then
  for _, b in ipairs(all) do run(b, n) end
else
  run(name, n)
end
