-- table: HbmUsageSummaryByType
-- requires: TensorInfo
-- HBM bytes the NEFF's variables occupy, by use: inputs, outputs, weights and other
-- (scratch and spill buffers).
SELECT (SELECT coalesce(max(neuron_device_idx), 0) FROM Metadata) AS neuron_device_idx,
       (SELECT coalesce(max(neuroncore_idx), 0) FROM Metadata) AS neuroncore_idx,
       CASE type WHEN 'IN' THEN 'Inputs' WHEN 'OUT' THEN 'Outputs'
                 WHEN 'WEIGHT' THEN 'Weights' ELSE 'Other' END AS usage_type,
       sum(size) AS usage_bytes
FROM TensorInfo
GROUP BY ALL
ORDER BY usage_type
