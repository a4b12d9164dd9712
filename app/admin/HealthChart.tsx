import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";

export interface ChartPoint {
  at: string;
  delivered: number;
  failed: number;
  dead: number;
  unusable: number;
}

// Days are counted from midnight UTC: their labels stay UTC dates (in another zone a day would straddle two).
const fmtDay = new Intl.DateTimeFormat("en-US", { month: "short", day: "numeric", timeZone: "UTC" });

/**
 * Deliveries, failures and what could not be used, per bucket (recharts; a fixed initial size so it
 * also renders on the server). Hours are shown in the store's time zone, named under the chart.
 */
export function HealthChart({ points, range, timeZone = "UTC" }: { points: ChartPoint[]; range: "24h" | "30d"; timeZone?: string }) {
  const fmt = range === "24h" ? new Intl.DateTimeFormat("en-US", { hour: "numeric", minute: "2-digit", timeZone }) : fmtDay;
  const data = points.map((p) => ({ ...p, label: fmt.format(new Date(p.at)) }));
  const axis = range === "24h" ? `Hours in your store's time zone (${timeZone.replaceAll("_", " ")})` : "Days (UTC)";
  return (
    <div>
      <div style={{ width: "100%", height: 240 }} role="img" aria-label={`Deliveries and failures over the last ${range === "24h" ? "24 hours" : "30 days"}`}>
        <ResponsiveContainer width="100%" height="100%" initialDimension={{ width: 640, height: 240 }}>
          <BarChart data={data} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
            <CartesianGrid strokeDasharray="3 3" vertical={false} stroke="#e3e3e3" />
            <XAxis dataKey="label" tick={{ fontSize: 11, fill: "#616161" }} interval="preserveStartEnd" minTickGap={16} />
            <YAxis allowDecimals={false} tick={{ fontSize: 11, fill: "#616161" }} width={40} />
            <Tooltip />
            <Legend wrapperStyle={{ fontSize: 12 }} />
            <Bar dataKey="delivered" name="Sent" stackId="a" fill="#29845a" isAnimationActive={false} />
            <Bar dataKey="failed" name="Failed attempts" stackId="a" fill="#e8b400" isAnimationActive={false} />
            <Bar dataKey="dead" name="Could not be delivered" stackId="a" fill="#c70a24" isAnimationActive={false} />
            <Bar dataKey="unusable" name="Could not be used" stackId="a" fill="#8a8a8a" isAnimationActive={false} />
          </BarChart>
        </ResponsiveContainer>
      </div>
      <p data-chart-axis style={{ margin: 0, textAlign: "center", fontSize: 12, color: "#616161" }}>
        {axis}
      </p>
    </div>
  );
}
