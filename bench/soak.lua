-- SPDX-License-Identifier: MIT
-- soak.lua: wrk script for bench/soak.sh. Each request is the next one of the seed
-- workflow's queries (Summary, instruction breakdown, source-line hotspots, a SchemaFields
-- lookup, listDbFiles), round-robin over the queries and over the profiles named in the
-- SOAK_PROFILES environment variable (space-separated), which soak.sh keeps re-publishing.
-- Threads start at different offsets, so all queries run at once.

local queries = {
	{ "Summary", "SELECT total_time, mfu_estimated_percent, tensor_engine_active_time_percent, " ..
		"vector_engine_active_time_percent, dma_active_time_percent, hbm_read_bytes, " ..
		"hbm_write_bytes FROM Summary" },
	{ "Instruction", "SELECT engine, opcode, COUNT(*) as cnt, SUM(duration_ns) as total_dur_ns, " ..
		"SUM(evt_wait_time_ns) as total_evt_wait_ns FROM Instruction GROUP BY engine, opcode " ..
		"ORDER BY total_dur_ns DESC" },
	{ "Instruction", "SELECT bir_debug_info_source_location, engine, opcode, COUNT(*) as cnt, " ..
		"SUM(duration_ns) as total_dur_ns FROM Instruction WHERE " ..
		"bir_debug_info_source_location IS NOT NULL GROUP BY bir_debug_info_source_location, " ..
		"engine, opcode ORDER BY total_dur_ns DESC LIMIT 10" },
	{ "SchemaFields", "SELECT table_name, field_name, field_description, field_unit " ..
		"FROM SchemaFields WHERE field_name ILIKE '%matmul%'" },
}

local bodies = {}
for _, q in ipairs(queries) do
	-- The SQL holds no quotes or backslashes that JSON would need escaped.
	bodies[#bodies + 1] = string.format(
		'{"type":"databaseExplorerQuery","tableName":"%s","query":"%s"}', q[1], q[2])
end
bodies[#bodies + 1] = '{"type":"listDbFiles"}'

local profiles = {}
for name in string.gmatch(os.getenv("SOAK_PROFILES") or "soak-a", "%S+") do
	profiles[#profiles + 1] = name
end

local counter = 0
local threads = 0

-- setup runs in wrk's main Lua state; thread:set makes `tid` a global of the thread's own.
function setup(thread)
	thread:set("tid", threads)
	threads = threads + 1
end

function init(args)
	counter = (tid or 0) * 7
end

function request()
	counter = counter + 1
	local body = bodies[counter % #bodies + 1]
	local profile = profiles[math.floor(counter / #bodies) % #profiles + 1]
	return wrk.format("POST", "/api/v1/db/" .. profile .. "/_search",
		{ ["Content-Type"] = "application/json" }, body)
end
