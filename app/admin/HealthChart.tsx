import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";

export interface ChartPoint {
  at: string;
  delivered: number;
  failed: number;
  dead: number;
  unusable: number;
}

const fmtHour = new Intl.DateTimeFormat("en-US", { hour: "2-digit", minute: "2-digit", hour12: false, timeZone: "UTC" });
const fmtDay = new Intl.DateTimeFormat("en-US", { month: "short", day: "numeric", timeZone: "UTC" });

/** Deliveries, failures and what could not be used, per bucket (recharts; a fixed initial size so it also renders on the server). */
export function HealthChart({ points, range }: { points: ChartPoint[]; range: "24h" | "30d" }) {
  const fmt = range === "24h" ? fmtHour : fmtDay;
  const data = points.map((p) => ({ ...p, label: fmt.format(new Date(p.at)) }));
  return (
    <div style={{ width: "100%", height: 240 }} role="img" aria-label={`Deliveries and failures over the last ${range === "24h" ? "24 hours" : "30 days"}`}>
      <ResponsiveContainer width="100%" height="100%" initialDimension={{ width: 640, height: 240 }}>
        <BarChart data={data} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
          <CartesianGrid strokeDasharray="3 3" vertical={false} stroke="#e3e3e3" />
          <XAxis dataKey="label" tick={{ fontSize: 11, fill: "#616161" }} interval="preserveStartEnd" minTickGap={16} />
          <YAxis allowDecimals={false} tick={{ fontSize: 11, fill: "#616161" }} width={40} />
          <Tooltip />
          <Legend wrapperStyle={{ fontSize: 12 }} />
          <Bar dataKey="delivered" name="Delivered" stackId="a" fill="#29845a" isAnimationActive={false} />
          <Bar dataKey="failed" name="Failed attempts" stackId="a" fill="#e8b400" isAnimationActive={false} />
          <Bar dataKey="dead" name="Gave up" stackId="a" fill="#c70a24" isAnimationActive={false} />
          <Bar dataKey="unusable" name="Could not be used" stackId="a" fill="#8a8a8a" isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
    </div>
  );
}
