// The flame graph's behaviour: zoom on click, search, details on hover.
// Frames are <g><title>NAME (N samples, P%)</title><rect/><text/></g> in
// #frames; the root is at the bottom. Coordinates as written are kept in
// data-x/data-w so zooming is always from the original layout.
"use strict";
var svg, frames, details, unzoom_btn, search_btn, matched, width, pad = 10, searching = null;

function init(evt) {
	svg = document.documentElement;
	frames = document.getElementById("frames");
	details = document.getElementById("details");
	unzoom_btn = document.getElementById("unzoom");
	search_btn = document.getElementById("search");
	matched = document.getElementById("matched");
	width = parseFloat(svg.getAttribute("width"));
	for (var g = frames.firstElementChild; g; g = g.nextElementSibling) {
		var r = g.querySelector("rect");
		g.setAttribute("data-x", r.getAttribute("x"));
		g.setAttribute("data-w", r.getAttribute("width"));
		g.setAttribute("data-fill", r.getAttribute("fill"));
		fit_text(g);
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
	unzoom_btn.addEventListener("click", unzoom);
	search_btn.addEventListener("click", function () {
		if (searching !== null) reset_search(); else search_prompt();
	});
	window.addEventListener("keydown", function (e) {
		if ((e.ctrlKey || e.metaKey) && e.key === "f") {
			e.preventDefault();
			search_prompt();
		} else if (e.key === "Escape") {
			reset_search();
		}
	});
	var s = new URLSearchParams(document.location.search).get("s");
	if (s) search(s);
}

function frame_of(node) {
	while (node && node.parentNode !== frames) node = node.parentNode;
	return node;
}

// "NAME (N samples, P%)" → NAME
function name_of(g) {
	var t = g.querySelector("title").textContent;
	var m = /^([\s\S]*) \(\d+ samples, [\d.]+%\)$/.exec(t);
	return m ? m[1] : t;
}

// The label: as much of the name as fits, at ~7 px per character.
function fit_text(g) {
	var r = g.querySelector("rect"), t = g.querySelector("text");
	var w = parseFloat(r.getAttribute("width")), name = name_of(g);
	var chars = Math.floor((w - 6) / 7);
	t.setAttribute("x", parseFloat(r.getAttribute("x")) + 3);
	if (chars < 3) t.textContent = "";
	else if (name.length > chars) t.textContent = name.substring(0, chars - 2) + "..";
	else t.textContent = name;
}

function place(g, x, w) {
	var r = g.querySelector("rect");
	r.setAttribute("x", x.toFixed(1));
	r.setAttribute("width", w.toFixed(1));
	g.classList.remove("hide");
	fit_text(g);
}

function zoom(target) {
	var zx = parseFloat(target.getAttribute("data-x")), zw = parseFloat(target.getAttribute("data-w"));
	var zy = parseFloat(target.querySelector("rect").getAttribute("y"));
	var ratio = (width - 2 * pad) / zw, eps = 0.0001;
	for (var g = frames.firstElementChild; g; g = g.nextElementSibling) {
		var x = parseFloat(g.getAttribute("data-x")), w = parseFloat(g.getAttribute("data-w"));
		var y = parseFloat(g.querySelector("rect").getAttribute("y"));
		g.classList.remove("parent");
		if (y > zy) {
			// Below: an ancestor spans the zoomed frame, anything else goes.
			if (x <= zx + eps && x + w >= zx + zw - eps) {
				g.classList.add("parent");
				place(g, pad, width - 2 * pad);
			} else {
				g.classList.add("hide");
			}
		} else if (x >= zx - eps && x + w <= zx + zw + eps && (y < zy || g === target)) {
			place(g, pad + (x - zx) * ratio, w * ratio);
		} else {
			g.classList.add("hide");
		}
	}
	unzoom_btn.classList.remove("hide");
}

function unzoom() {
	for (var g = frames.firstElementChild; g; g = g.nextElementSibling) {
		g.classList.remove("parent");
		place(g, parseFloat(g.getAttribute("data-x")), parseFloat(g.getAttribute("data-w")));
	}
	unzoom_btn.classList.add("hide");
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
	matched.textContent = "Matched: " + (100 * covered / (width - 2 * pad)).toFixed(1) + "%";
}

function reset_search() {
	for (var g = frames.firstElementChild; g; g = g.nextElementSibling)
		g.querySelector("rect").setAttribute("fill", g.getAttribute("data-fill"));
	searching = null;
	search_btn.textContent = "Search";
	matched.textContent = " ";
}
