// The flame graph's behaviour: fit to the window, zoom on click, search,
// details on hover, flip between a flame graph (root at the bottom) and an
// icicle graph (root at the top). Frames are
// <g><title>NAME (N samples, P%)</title><rect/><text/></g> in #frames. The
// layout as written is kept as fractions of the full width (data-x, data-w)
// and depths (data-d), so every redraw starts from it.
"use strict";
var svg, frames, details, unzoom_btn, search_btn, flip_btn, matched;
var width, height, pad = 10, frame_h = 16, top_h = 56, bottom_h = 24;
var searching = null, zoomed = null, icicle = false;
var embedded = false, listening = false; // drawn inside a page (pyebpf serve); window listeners added

function init(evt) {
	// An SVG file runs this on load; pyebpf serve's page for the SVG it inlines.
	var root = evt && evt.target;
	embedded = !!(root && root.tagName && root.tagName.toLowerCase() === "svg" && root !== document.documentElement);
	svg = embedded ? root : document.documentElement;
	searching = null;
	zoomed = null;
	frames = document.getElementById("frames");
	details = document.getElementById("details");
	unzoom_btn = document.getElementById("unzoom");
	search_btn = document.getElementById("search");
	flip_btn = document.getElementById("flip");
	matched = document.getElementById("matched");
	var w0 = parseFloat(svg.getAttribute("width"));
	height = parseFloat(svg.getAttribute("height"));
	for (var g = frames.firstElementChild; g; g = g.nextElementSibling) {
		var r = g.querySelector("rect");
		var y = parseFloat(r.getAttribute("y"));
		g.setAttribute("data-x", (parseFloat(r.getAttribute("x")) - pad) / (w0 - 2 * pad));
		g.setAttribute("data-w", parseFloat(r.getAttribute("width")) / (w0 - 2 * pad));
		g.setAttribute("data-d", Math.round((height - bottom_h - y) / frame_h) - 1);
		g.setAttribute("data-fill", r.getAttribute("fill"));
	}
	frames.addEventListener("click", function (e) {
		var g = frame_of(e.target);
		if (g) zoom(g);
	});
	frames.addEventListener("mouseover", function (e) {
		var g = frame_of(e.target);
		if (g) details.textContent = g.querySelector("title").textContent;
	});
	frames.addEventListener("mouseout", function () { details.textContent = " "; });
	unzoom_btn.addEventListener("click", function () { zoom(null); });
	flip_btn.addEventListener("click", function () { flip(!icicle); });
	search_btn.addEventListener("click", function () {
		if (searching !== null) reset_search(); else search_prompt();
	});
	if (!listening) {
		listening = true;
		window.addEventListener("keydown", function (e) {
			if ((e.ctrlKey || e.metaKey) && e.key === "f" && !embedded) {
				e.preventDefault();
				search_prompt();
			} else if (e.key === "Escape") {
				reset_search();
			}
		});
		window.addEventListener("resize", function () { fit(); layout(); });
	}
	var params = new URLSearchParams(document.location.search);
	icicle = params.has("icicle");
	fit();
	flip(icicle);
	var s = params.get("s");
	if (s) search(s);
}

// The window's width (the file's own when it is shown inside a page).
function fit() {
	var w = window.innerWidth > 200 && window === window.top ? window.innerWidth : 0;
	if (w && (embedded || height > window.innerHeight)) w -= 20; // the vertical scroll bar's room
	if (!w) w = parseFloat(svg.getAttribute("width"));
	width = w;
	svg.setAttribute("width", w);
	svg.setAttribute("viewBox", "0 0 " + w + " " + height);
	svg.querySelector("rect").setAttribute("width", w);
	document.getElementById("title").setAttribute("x", w / 2);
	search_btn.setAttribute("x", w - pad);
	matched.setAttribute("x", w - pad);
	flip_btn.setAttribute("x", w - pad - 80);
}

function frame_of(node) {
	while (node && node.parentNode !== frames) node = node.parentNode;
	return node;
}

// "NAME (N samples, P%)" or a diff's "NAME (N samples, P%; before ...)" → NAME
function name_of(g) {
	var t = g.querySelector("title").textContent;
	var m = /^([\s\S]*) \(\d+ samples, [\d.]+%(?:; [^()]*)?\)$/.exec(t);
	return m ? m[1] : t;
}

// The label: as much of the name as fits, at ~7 px per character.
function fit_text(g, x, w) {
	var t = g.querySelector("text"), name = name_of(g);
	var chars = Math.floor((w - 6) / 7);
	t.setAttribute("x", (x + 3).toFixed(1));
	if (chars < 3) t.textContent = "";
	else if (name.length > chars) t.textContent = name.substring(0, chars - 2) + "..";
	else t.textContent = name;
}

function y_of(depth) {
	return icicle ? top_h + depth * frame_h : height - bottom_h - (depth + 1) * frame_h;
}

function place(g, x, w) {
	var r = g.querySelector("rect"), y = y_of(parseInt(g.getAttribute("data-d"), 10));
	r.setAttribute("x", x.toFixed(1));
	r.setAttribute("width", w.toFixed(1));
	r.setAttribute("y", y);
	g.querySelector("text").setAttribute("y", y + frame_h - 5);
	g.classList.remove("hide");
	fit_text(g, x, w);
}

// Draw every frame for the current width, zoom and orientation: a zoomed
// frame spans the width, its ancestors too (dimmed), everything else beside
// it is hidden.
function layout() {
	var full = width - 2 * pad, eps = 1e-9;
	var zx = 0, zw = 1, zd = -1;
	if (zoomed) {
		zx = parseFloat(zoomed.getAttribute("data-x"));
		zw = parseFloat(zoomed.getAttribute("data-w"));
		zd = parseInt(zoomed.getAttribute("data-d"), 10);
	}
	for (var g = frames.firstElementChild; g; g = g.nextElementSibling) {
		var x = parseFloat(g.getAttribute("data-x")), w = parseFloat(g.getAttribute("data-w"));
		var d = parseInt(g.getAttribute("data-d"), 10);
		g.classList.remove("parent");
		if (d < zd) {
			if (x <= zx + eps && x + w >= zx + zw - eps) {
				g.classList.add("parent");
				place(g, pad, full);
			} else {
				g.classList.add("hide");
			}
		} else if (x >= zx - eps && x + w <= zx + zw + eps) {
			place(g, pad + (x - zx) / zw * full, w / zw * full);
		} else {
			g.classList.add("hide");
		}
	}
}

function zoom(target) {
	zoomed = target;
	layout();
	if (target) unzoom_btn.classList.remove("hide");
	else unzoom_btn.classList.add("hide");
}

// Flame (root at the bottom) or icicle (root at the top); either way the
// view opens on the root and the widest frames, not on empty space.
function flip(to_icicle) {
	icicle = to_icicle;
	flip_btn.textContent = icicle ? "Flame" : "Icicle";
	layout();
	if (!embedded) window.scrollTo(0, icicle ? 0 : height);
}

function search_prompt() {
	var term = prompt("Search frames (regular expression):", searching || "");
	if (term) search(term);
}

function search(term) {
	var re;
	try {
		re = new RegExp(term);
	} catch (e) {
		matched.textContent = "bad regular expression";
		return;
	}
	reset_search();
	var spans = [];
	for (var g = frames.firstElementChild; g; g = g.nextElementSibling) {
		if (!re.test(name_of(g))) continue;
		g.querySelector("rect").setAttribute("fill", "rgb(230,0,230)");
		spans.push([parseFloat(g.getAttribute("data-x")), parseFloat(g.getAttribute("data-w"))]);
	}
	// The share: matched frames' widths, a frame inside another counted once.
	spans.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });
	var covered = 0, end = -1;
	for (var i = 0; i < spans.length; i++) {
		var s = spans[i][0], e = s + spans[i][1];
		if (e <= end) continue;
		covered += e - Math.max(s, end);
		end = e;
	}
	searching = term;
	search_btn.textContent = "Reset Search";
	matched.textContent = "Matched: " + (100 * covered).toFixed(1) + "%";
}

function reset_search() {
	for (var g = frames.firstElementChild; g; g = g.nextElementSibling)
		g.querySelector("rect").setAttribute("fill", g.getAttribute("data-fill"));
	searching = null;
	search_btn.textContent = "Search";
	matched.textContent = " ";
}
